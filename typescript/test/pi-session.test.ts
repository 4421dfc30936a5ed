// The lines of a pi session file are typed: every entry pi writes has its body, its id, parent and
// timestamp on the TranscriptEntry (so the tree is walked without JSON), an entry of an unknown
// type round-trips, and an edit of a typed entry is what gets written. (pi-json.test.ts checks
// that every fixture line comes back byte for byte; the corpus's pi_json cases pin the rest.)

import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { create, fromBinary, fromJson, toBinary, toJson } from "@bufbuild/protobuf";
import { NullValue } from "@bufbuild/protobuf/wkt";
import {
  entryFromPi,
  entryToPi,
  PiJsonError,
  SessionEntrySchema,
  SessionLineError,
  type SessionWarning,
  sessionFromPi,
  sessionToPi,
  type TranscriptEntry,
  TranscriptEntrySchema,
} from "pi-proto";
import { TEST_TIMEOUT } from "./support/messages.js";

const FOLDER = fileURLToPath(new URL("../../tests/fixtures/pi-1.6-sessions/", import.meta.url));

async function sessions(): Promise<string[]> {
  const names = await readdir(FOLDER);
  return names.filter((name) => name.endsWith(".jsonl") && name !== "events-json-mode.jsonl").sort();
}

async function lines(name: string): Promise<string[]> {
  return (await readFile(FOLDER + name, "utf8")).split("\n").filter((line) => line.trim());
}

function throughTheWire(entry: TranscriptEntry): TranscriptEntry {
  return fromBinary(TranscriptEntrySchema, toBinary(TranscriptEntrySchema, entry));
}

/** Through ProtoJSON, where a root entry's parent is `"root": null`. */
function throughProtoJson(entry: TranscriptEntry): TranscriptEntry {
  return fromJson(TranscriptEntrySchema, toJson(TranscriptEntrySchema, entry));
}

test("every entry pi wrote is typed: a body, an id and a timestamp, no JSON left", {
  timeout: TEST_TIMEOUT,
}, async () => {
  const bodies = new Set<string>();
  const files = await sessions();
  assert.ok(files.length >= 15);
  for (const name of files) {
    for (const [index, line] of (await lines(name)).entries()) {
      const where = `${name}: line ${index + 1}`;
      const entry = entryFromPi(JSON.parse(line));
      assert.ok(entry.id, where);
      assert.ok(entry.timestamp, where);
      const body = entry.entry;
      if (body.case === "message") {
        assert.equal(entry.sessionJson, "", `${where}: the envelope is typed`);
        continue;
      }
      assert.equal(body.case, "sessionEntry", where);
      const typed = body.value.body;
      assert.notEqual(typed.case, undefined, `${where}: ${body.value.type} is untyped`);
      assert.equal(body.value.fieldsJson, "", where);
      assert.equal(typed.value!.extraJson, "", `${where}: keys left untyped`);
      bodies.add(typed.case!);
      // The header is the session's, outside the tree; every other entry has a place in it.
      assert.equal(entry.parent.case === undefined, typed.case === "header", where);
      // Binary and ProtoJSON carry the typed entry, and it is written back as pi wrote it.
      assert.equal(JSON.stringify(entryToPi(throughProtoJson(throughTheWire(entry)))), line, where);
    }
  }
  const expected = ["header", "modelChange", "thinkingLevelChange", "compaction", "branchSummary", "label"];
  expected.push("sessionInfo", "custom", "customMessage", "contextEdit");
  for (const kind of expected) assert.ok(bodies.has(kind), `no fixture has a ${kind} entry`);
});

test("a session's tree is walked by id and parent, without reading JSON", { timeout: TEST_TIMEOUT }, async () => {
  const entries = (await lines("branch.jsonl")).map((line) => entryFromPi(JSON.parse(line)));
  const [header, ...tree] = entries;
  assert.equal(header!.entry.case === "sessionEntry" && header!.entry.value.body.case, "header");
  const seen = new Set<string>();
  let roots = 0;
  for (const entry of tree) {
    assert.ok(entry.id);
    if (entry.parent.case === "root") roots += 1;
    else assert.ok(entry.parent.case === "parentId" && seen.has(entry.parent.value), `${entry.id}: no parent before`);
    seen.add(entry.id);
  }
  assert.equal(roots, 1);
  const summaries = tree.flatMap((entry) =>
    entry.entry.case === "sessionEntry" && entry.entry.value.body.case === "branchSummary"
      ? [entry.entry.value.body.value]
      : [],
  );
  assert.equal(summaries.length, 1);
  const summary = summaries[0]!;
  assert.ok(summary.fromId !== undefined && seen.has(summary.fromId));
  assert.equal(summary.usage?.totalTokens, 52n);

  // The branch left: from the summarized entry back to the root, by parent_id.
  const byId = new Map(tree.map((entry) => [entry.id!, entry]));
  const branch: string[] = [];
  for (let at = byId.get(summary.fromId!); at !== undefined; ) {
    branch.push(at.id!);
    at = at.parent.case === "parentId" ? byId.get(at.parent.value) : undefined;
  }
  assert.equal(byId.get(branch.at(-1)!)!.parent.case, "root");
  assert.ok(branch.length >= 3);
});

test("an entry of a type pi does not define round-trips, its place typed", { timeout: TEST_TIMEOUT }, () => {
  const line =
    '{"type":"bookmark","id":"77aa88bb","parentId":null,"timestamp":"2026-12-02T06:20:00.487Z","note":"here","at":[1,2.5]}';
  const entry = throughProtoJson(throughTheWire(entryFromPi(JSON.parse(line))));
  assert.equal(entry.entry.case, "sessionEntry");
  assert.equal(entry.entry.value.type, "bookmark");
  assert.equal(entry.entry.value.body.case, undefined);
  assert.equal(entry.entry.value.fieldsJson, '{"note":"here","at":[1,2.5]}');
  assert.equal(entry.id, "77aa88bb");
  assert.equal(entry.parent.case, "root");
  assert.equal(JSON.stringify(entryToPi(entry)), line);

  // Its keys in another order keep that order.
  const reordered = '{"type":"bookmark","note":"here","timestamp":"t","id":"77aa88bc","parentId":"77aa88bb"}';
  const again = entryFromPi(JSON.parse(reordered));
  assert.equal(again.entry.case === "sessionEntry" && again.entry.value.fieldsJson.includes('"$order"'), true);
  assert.equal(JSON.stringify(entryToPi(throughTheWire(again))), reordered);
});

test("an edit of a typed entry is what gets written, in pi's order", { timeout: TEST_TIMEOUT }, () => {
  const line =
    '{"type":"label","id":"74d38200","parentId":"50667f34","timestamp":"2026-12-02T06:19:59.678Z","targetId":"50667f34","label":"checkpoint-1"}';
  const entry = entryFromPi(JSON.parse(line));
  assert.ok(entry.entry.case === "sessionEntry" && entry.entry.value.body.case === "label");
  const label = entry.entry.value.body.value;
  assert.equal(label.label, "checkpoint-1");
  label.label = "checkpoint-2";
  entry.parent = { case: "parentId", value: "74d38100" };
  const edited = line.replace("checkpoint-1", "checkpoint-2").replace('"parentId":"50667f34"', '"parentId":"74d38100"');
  assert.equal(JSON.stringify(entryToPi(entry)), edited);

  // A label cleared is left out, as pi leaves it; an entry made a root gets pi's null.
  label.label = undefined;
  entry.parent = { case: "root", value: NullValue.NULL_VALUE };
  const cleared = JSON.stringify(entryToPi(entry));
  assert.equal(
    cleared,
    '{"type":"label","id":"74d38200","parentId":null,"timestamp":"2026-12-02T06:19:59.678Z","targetId":"50667f34"}',
  );
});

test("an entry made from its fields is written in pi's key order for its type", { timeout: TEST_TIMEOUT }, () => {
  // The body's key order is the schema's (its extra_json's modelled_keys): a custom entry's id
  // comes after its data, a model change's after its type.
  const custom = create(TranscriptEntrySchema, {
    entry: {
      case: "sessionEntry",
      value: create(SessionEntrySchema, {
        type: "custom",
        body: { case: "custom", value: { customType: "todo", dataJson: '{"items":[]}' } },
      }),
    },
    id: "5f0c1a2b",
    parent: { case: "parentId", value: "74d38200" },
    timestamp: "2026-12-02T06:20:00.487Z",
  });
  assert.equal(
    JSON.stringify(entryToPi(custom)),
    '{"type":"custom","customType":"todo","data":{"items":[]},"id":"5f0c1a2b","parentId":"74d38200","timestamp":"2026-12-02T06:20:00.487Z"}',
  );
  const change = create(TranscriptEntrySchema, {
    entry: {
      case: "sessionEntry",
      value: { type: "model_change", body: { case: "modelChange", value: { provider: "p", modelId: "m" } } },
    },
    id: "0e383ba7",
    parent: { case: "root", value: NullValue.NULL_VALUE },
    timestamp: "t",
  });
  assert.equal(
    JSON.stringify(entryToPi(change)),
    '{"type":"model_change","id":"0e383ba7","parentId":null,"timestamp":"t","provider":"p","modelId":"m"}',
  );
});

test("a message entry types its envelope; a bare one is told from a bare message", { timeout: TEST_TIMEOUT }, () => {
  const line =
    '{"type":"message","id":"8bb83bac","parentId":null,"timestamp":"2026-12-02T06:19:57.901Z","message":{"role":"user","content":"hi","timestamp":1}}';
  const entry = entryFromPi(JSON.parse(line));
  assert.equal(entry.entry.case, "message");
  assert.equal(entry.id, "8bb83bac");
  assert.equal(entry.parent.case, "root");
  assert.equal(entry.sessionJson, "");
  assert.equal(JSON.stringify(entryToPi(entry)), line);

  const envelope = '{"type":"message","message":{"role":"user","content":"hi","timestamp":1}}';
  const bare = entryFromPi(JSON.parse(envelope));
  assert.equal(bare.sessionJson, "{}");
  assert.equal(JSON.stringify(entryToPi(throughTheWire(bare))), envelope);
  bare.sessionJson = "";
  assert.equal(JSON.stringify(entryToPi(bare)), '{"role":"user","content":"hi","timestamp":1}');
});

test("a bad value in a session entry names its path from the line", { timeout: TEST_TIMEOUT }, () => {
  const bad: Array<[unknown, string, string]> = [
    [{ type: "label", id: "a", parentId: 7, timestamp: "t" }, "", "parentId"],
    [{ type: "label", id: "a", parentId: 7, timestamp: "t" }, "line 3", "line 3.parentId"],
    [{ type: "compaction", id: "a", parentId: null, tokensBefore: "52" }, "", "tokensBefore"],
    [{ type: "session", version: 3.5, id: "s" }, "", "version"],
    [{ type: "custom_message", customType: "c", content: [{ type: "toolCall" }] }, "", "content[0].type"],
    [{ type: "context_edit", targetId: "x", replacement: {} }, "", "replacement.content"],
    [
      { type: "context_edit", targetId: "x", replacement: { content: [{ type: "audio" }] } },
      "",
      "replacement.content[0].type",
    ],
    [{ type: 5 }, "", ""],
  ];
  for (const [value, where, path] of bad) {
    assert.throws(
      () => entryFromPi(value, where),
      (error) => error instanceof PiJsonError && error.path === path,
      `${JSON.stringify(value)} should fail at "${path}"`,
    );
  }
});

test("a line pi wrote with two entries run together is kept as it is, named in a warning", {
  timeout: TEST_TIMEOUT,
}, async () => {
  // Excerpts of two session files pi committed to its own repository (tests/fixtures/pi-sessions/README.md).
  const real: Array<[string, number, number]> = [
    ["entries-run-together-message.jsonl", 6, 4],
    ["entries-run-together-compaction.jsonl", 5, 5],
  ];
  for (const [name, count, bad] of real) {
    const text = await readFile(
      fileURLToPath(new URL(`../../tests/fixtures/pi-sessions/${name}`, import.meta.url)),
      "utf8",
    );
    const warnings: SessionWarning[] = [];
    const entries = sessionFromPi(text, warnings);
    assert.equal(entries.length, count, name);
    assert.deepEqual(
      warnings.map((warning) => warning.line),
      [bad],
      name,
    );
    assert.equal(entries[bad - 1]!.entry.case, "unparsedLine", name);
    assert.equal(sessionToPi(entries.map(throughTheWire)), text, `${name}: byte for byte, through the wire`);
    assert.equal(sessionToPi(entries.map(throughProtoJson)), text, `${name}: byte for byte, through ProtoJSON`);
  }
  // A line of JSON that is no entry is still refused, naming its line and the path on it.
  assert.throws(
    () => sessionFromPi('{"type":"session","id":"s"}\n{"type":"label","parentId":7}\n'),
    (error) => error instanceof SessionLineError && error.line === 2 && error.path === "entry.parentId",
  );
  // An unparsed line is one line: one holding a newline is not written.
  const two = create(TranscriptEntrySchema, { entry: { case: "unparsedLine", value: "a\nb" } });
  assert.throws(() => sessionToPi([two]), PiJsonError);
});
