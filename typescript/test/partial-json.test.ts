// The completion of argument text cut short: the same whatever the deltas, and pi's shapes.
// (The corpus's partial_json cases pin the completion across runtimes.)

import assert from "node:assert/strict";
import { test } from "node:test";
import { ArgumentsCompletion, completeArguments, completeJson, EMPTY_ARGUMENTS } from "pi-proto";
import { TEST_TIMEOUT } from "./support/messages.js";

const TEXTS = [
  '{"path": "说明/😀.md", "edits": [{"old": "a\\"b\\\\c\\u00e9", "new": null}, 12.5e-3, -0, true, false]}',
  '{ "a" : { "b" : [ [ ], { } ] } , "c" : 1E+2 }  ',
  '{"a": 01}',
  '{"a": "x\ty"}',
  '[{"a": 1}]',
];

test("the completion is the same whatever the deltas", { timeout: TEST_TIMEOUT }, () => {
  for (const text of TEXTS) {
    const points = Array.from(text); // whole characters, as deltas carry them
    for (let size = 1; size <= 7; size += 1) {
      const completion = new ArgumentsCompletion();
      for (let at = 0; at < points.length; at += size) {
        const completed = completion.push(points.slice(at, at + size).join(""));
        const sofar = points.slice(0, at + size).join("");
        assert.equal(completed, completeJson(sofar), `${JSON.stringify(sofar)} in deltas of ${size}`);
      }
    }
  }
});

test("what a reader sees while the arguments stream", { timeout: TEST_TIMEOUT }, () => {
  const cases: Array<[string, string]> = [
    ["", EMPTY_ARGUMENTS],
    ['{"path": "REA', '{"path": "REA"}'],
    ['{"a": "x\\u00', '{"a": "x"}'],
    ['{"a": 1, "b', '{"a": 1}'],
    ['{"a": 12.', '{"a": 12}'],
    ['{"a": [1, {"c": nu', '{"a": [1, {"c": null}]}'],
    ['{"a": -', "{}"],
    ['{"a": NaN', "{}"],
    ['{"a": "b"}x', "{}"],
    ["[1, 2", "{}"],
  ];
  for (const [text, completed] of cases) assert.equal(completeJson(text), completed, text);
  // Whole text is kept as it is, spaces included.
  assert.equal(completeJson('{ "a" : 1 } \n'), '{ "a" : 1 } \n');
});

test("completeArguments, the old name, is completeJson", () => {
  assert.equal(completeArguments('{"a": [1, tr'), '{"a": [1, true]}');
});
