// The golden wire vectors of tests/vectors: every one decodes, re-encodes to identical bytes
// (unknown fields included) and prints the same ProtoJSON as the Python runtimes.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { createRegistry, fromBinary, fromJson, type JsonValue, toBinary, toJson } from "@bufbuild/protobuf";
import {
  file_pi_ai_v1_content,
  file_pi_ai_v1_json,
  file_pi_ai_v1_context,
  file_pi_ai_v1_event,
  file_pi_ai_v1_message,
  file_pi_ai_v1_service,
} from "pi-proto";
import { TEST_TIMEOUT } from "./support/messages.js";
import { repoRoot } from "./support/server.js";

interface Manifest {
  vectors: Array<{ name: string; type: string; files: string[] }>;
}

const directory = `${repoRoot}tests/vectors/`;
const manifest = JSON.parse(readFileSync(`${directory}manifest.json`, "utf8")) as Manifest;
const registry = createRegistry(
  file_pi_ai_v1_content,
  file_pi_ai_v1_json,
  file_pi_ai_v1_message,
  file_pi_ai_v1_context,
  file_pi_ai_v1_event,
  file_pi_ai_v1_service,
);

test("the manifest lists vectors of every message in pi.ai.v1", { timeout: TEST_TIMEOUT }, () => {
  const covered = new Set(manifest.vectors.map((vector) => vector.type));
  const all = [...registry].filter((desc) => desc.kind === "message").map((desc) => desc.typeName);
  assert.deepEqual(all.filter((name) => !covered.has(name)), []);
});

for (const vector of manifest.vectors) {
  test(`vector ${vector.name}`, { timeout: TEST_TIMEOUT }, () => {
    const desc = registry.getMessage(vector.type);
    assert.ok(desc, `${vector.type} is generated`);
    const data = new Uint8Array(readFileSync(`${directory}${vector.name}.binpb`));
    const json = JSON.parse(readFileSync(`${directory}${vector.name}.json`, "utf8")) as JsonValue;

    const message = fromBinary(desc, data);
    assert.deepEqual(toBinary(desc, message), data);
    assert.deepEqual(toJson(desc, message), json);
    // ProtoJSON has no place for unknown fields: it parses back to the known ones.
    assert.deepEqual(toBinary(desc, fromJson(desc, json)), toBinary(desc, message, { writeUnknownFields: false }));
  });
}
