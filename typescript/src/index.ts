/** pi-proto for TypeScript: the pi.ai.v1 types, the event stream runtime and the client (gRPC, Connect, gRPC-web). */

export { Accumulator, DEFAULT_MAX_MESSAGE_BYTES, StreamProtocolError, streamRuleId } from "./accumulator.js";
export {
  AssistantMessageEventStream,
  type Producer,
  type StreamFailure,
  type StreamOptions,
} from "./assistant-message-event-stream.js";
export {
  CallError,
  type CallOptions,
  createModelTransport,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_UNARY_TIMEOUT_MS,
  getModel,
  listModels,
  MAX_RESUMES,
  ModelCallStream,
  PROTOCOLS,
  type Protocol,
  RESUME_BACKOFF_MS,
  type StreamModelOptions,
  streamModel,
  type TransportOptions,
} from "./client.js";
export { calculateCost } from "./cost.js";
export { contentSha256 } from "./digest.js";
export { EventStream } from "./event-stream.js";
export { eventKind, isTerminal, terminalMessage } from "./events.js";
export * from "./gen/pi/ai/v1/content_pb.js";
export * from "./gen/pi/ai/v1/context_pb.js";
export * from "./gen/pi/ai/v1/event_pb.js";
export * from "./gen/pi/ai/v1/json_pb.js";
export * from "./gen/pi/ai/v1/message_pb.js";
export * from "./gen/pi/ai/v1/model_pb.js";
export * from "./gen/pi/ai/v1/service_pb.js";
export * from "./gen/pi/ai/v1/tool_pb.js";
export * from "./gen/pi/ai/v1/transcript_pb.js";
export { type JsonTextProblem, jsonTextProblem, jsonViolations, MAX_JSON_DEPTH } from "./json-text.js";
export { type AnyMessage, textOf, unwrap } from "./messages.js";
export { Numbering } from "./numbering.js";
export { ArgumentsCompletion, completeArguments, completeJson, EMPTY_ARGUMENTS } from "./partial-json.js";
export {
  assistantFromPi,
  assistantToPi,
  contextFromPi,
  contextToPi,
  type EventToPiOptions,
  eventFromPi,
  eventToPi,
  messageFromPi,
  messageToPi,
  ORDER_KEY,
  PiJsonError,
} from "./pi-json.js";
export {
  entryFromPi,
  entryToPi,
  SessionLineError,
  type SessionWarning,
  sessionFromPi,
  sessionToPi,
} from "./pi-session.js";
export { check, ValidationError, type Violation, violations } from "./validate.js";
