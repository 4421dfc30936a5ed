/** pi-proto for TypeScript: the pi.ai.v1 types, the event stream runtime and the client (gRPC, Connect, gRPC-web). */

export * from "./gen/pi/ai/v1/json_pb.js";
export * from "./gen/pi/ai/v1/content_pb.js";
export * from "./gen/pi/ai/v1/tool_pb.js";
export * from "./gen/pi/ai/v1/message_pb.js";
export * from "./gen/pi/ai/v1/context_pb.js";
export * from "./gen/pi/ai/v1/event_pb.js";
export * from "./gen/pi/ai/v1/model_pb.js";
export * from "./gen/pi/ai/v1/transcript_pb.js";
export * from "./gen/pi/ai/v1/service_pb.js";
export { EventStream } from "./event-stream.js";
export {
  AssistantMessageEventStream,
  type Producer,
  type StreamFailure,
  type StreamOptions,
} from "./assistant-message-event-stream.js";
export { Accumulator, DEFAULT_MAX_MESSAGE_BYTES, StreamProtocolError } from "./accumulator.js";
export { ArgumentsCompletion, EMPTY_ARGUMENTS, completeArguments } from "./partial-json.js";
export { calculateCost } from "./cost.js";
export { eventKind, isTerminal, terminalMessage } from "./events.js";
export { ValidationError, type Violation, check, violations } from "./validate.js";
export { MAX_JSON_DEPTH, type JsonTextProblem, jsonTextProblem, jsonViolations } from "./json-text.js";
export {
  ABSENT_KEY,
  ORDER_KEY,
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
  CallError,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_UNARY_TIMEOUT_MS,
  type CallOptions,
  ModelCallStream,
  PROTOCOLS,
  type Protocol,
  type StreamModelOptions,
  type TransportOptions,
  createModelTransport,
  getModel,
  listModels,
  streamModel,
} from "./client.js";
