/**
 * The server's ModelService, over Connect (binary messages) to the page's own origin, through the
 * package's client: listModels, and streamModel, whose streams resume, check their numbering and
 * the terminal digest. The token, when the user gave one, goes with every call.
 */

import type { MessageInitShape } from "@bufbuild/protobuf";
import { createConnectTransport } from "@connectrpc/connect-web";
import {
  type AgentContextSchema,
  type GenerationOptionsSchema,
  listModels,
  type Model,
  type ModelCallStream,
  streamModel,
} from "../../typescript/src/index.ts";
import { savedToken } from "./auth.ts";

// Binary: StreamBatched is read through StreamBatchedView, whose events stay bytes.
const transport = createConnectTransport({ baseUrl: location.origin, useBinaryFormat: true });

function token(): { token?: string } {
  const given = savedToken();
  return given === undefined ? {} : { token: given };
}

/** The models the server serves; rejects with the package's CallError (its `statusCode`). */
export function models(): Promise<Model[]> {
  return listModels(transport, "", token());
}

/** What one call asks for. */
export interface Call {
  provider: string;
  model: string;
  generation: MessageInitShape<typeof GenerationOptionsSchema>;
}

/** Start streaming the model's answer to `context`; the stream never throws, and `cancel()` aborts it. */
export function stream(context: MessageInitShape<typeof AgentContextSchema>, call: Call): ModelCallStream {
  return streamModel(transport, context, { ...call, ...token() });
}
