/** pi-proto for TypeScript: the pi.ai.v1 types, the event stream runtime and the gRPC client. */

export * from "./gen/pi/ai/v1/json_pb.js";
export * from "./gen/pi/ai/v1/content_pb.js";
export * from "./gen/pi/ai/v1/message_pb.js";
export * from "./gen/pi/ai/v1/context_pb.js";
export * from "./gen/pi/ai/v1/event_pb.js";
export * from "./gen/pi/ai/v1/service_pb.js";
export { EventStream } from "./event-stream.js";
export { AssistantMessageEventStream, type Producer } from "./assistant-message-event-stream.js";
export { Accumulator, StreamProtocolError } from "./accumulator.js";
export { eventKind, isTerminal, terminalMessage } from "./events.js";
export {
  DEFAULT_LIMITS,
  type Limits,
  ValidationError,
  checkAssistant,
  checkContext,
  checkMessage,
  checkRequest,
  parseJsonObject,
} from "./validate.js";
export {
  PiJsonError,
  assistantFromPi,
  assistantToPi,
  contextFromPi,
  contextToPi,
  entryFromPi,
  entryToPi,
  eventFromPi,
  eventToPi,
  messageFromPi,
  messageToPi,
} from "./pi-json.js";
export { textOf, unwrap, type AnyMessage } from "./messages.js";
export {
  ModelCallStream,
  type StreamModelOptions,
  type TransportOptions,
  createModelTransport,
  streamModel,
} from "./client.js";
