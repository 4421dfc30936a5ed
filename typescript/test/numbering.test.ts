// The numbers of a wire stream's events (rule sequence): repeats dropped, gaps refused, merged
// deltas let through when the call asked for coalescing. (The corpus's resume cases pin them over
// the wire.)

import assert from "node:assert/strict";
import { test } from "node:test";
import { type ModelEvent, Numbering, StreamProtocolError, StreamRule } from "../src/index.js";
import { event, TEST_TIMEOUT } from "./support/messages.js";

function numbered(init: Parameters<typeof event>[0], seq: number): ModelEvent {
  const item = event(init);
  item.seq = BigInt(seq);
  return item;
}

const start = (seq: number) => numbered({ case: "start", value: { streamId: "s-1" } }, seq);
const textStart = (seq: number) => numbered({ case: "textStart", value: { contentIndex: 0 } }, seq);
const delta = (seq: number) => numbered({ case: "textDelta", value: { contentIndex: 0, delta: "x" } }, seq);
const textEnd = (seq: number) => numbered({ case: "textEnd", value: { contentIndex: 0 } }, seq);

/** What `admit` does with each event, its index the count of events admitted before it. */
function admitted(numbering: Numbering, events: ModelEvent[]): boolean[] {
  let applied = 0;
  return events.map((item) => {
    const admit = numbering.admit(item, applied);
    if (admit) applied += 1;
    return admit;
  });
}

function refusal(numbering: Numbering, events: ModelEvent[]): StreamProtocolError {
  try {
    admitted(numbering, events);
  } catch (error) {
    assert.ok(error instanceof StreamProtocolError);
    return error;
  }
  assert.fail("every event was admitted");
}

test("events numbered one after another are all applied", { timeout: TEST_TIMEOUT }, () => {
  const numbering = new Numbering();
  assert.deepEqual(admitted(numbering, [start(1), textStart(2), delta(3), textEnd(4)]), [true, true, true, true]);
  assert.equal(numbering.last, 4n);
});

test("an event numbered at or below the last applied is a repeat, dropped", { timeout: TEST_TIMEOUT }, () => {
  const numbering = new Numbering();
  const got = admitted(numbering, [start(1), textStart(2), delta(3), textStart(2), delta(3), delta(4)]);
  assert.deepEqual(got, [true, true, true, false, false, true]);
  assert.equal(numbering.last, 4n);
});

test("a gap breaks rule sequence at the index the event would have had", { timeout: TEST_TIMEOUT }, () => {
  const numbering = new Numbering();
  const error = refusal(numbering, [start(1), textStart(2), textStart(2), delta(4)]);
  assert.deepEqual([error.eventIndex, error.rule, error.ruleId], [2, StreamRule.SEQUENCE, "sequence"]);
  assert.match(error.detail, /event 3 is missing/);
  assert.equal(numbering.last, 2n); // what a client resumes after
});

test("with coalesce_deltas a merged delta may skip numbers; other events may not", { timeout: TEST_TIMEOUT }, () => {
  const coalesced = new Numbering(true);
  assert.deepEqual(admitted(coalesced, [start(1), textStart(2), delta(5), textEnd(6)]), [true, true, true, true]);
  assert.equal(coalesced.last, 6n);
  assert.equal(refusal(new Numbering(true), [start(1), textStart(2), delta(3), textEnd(5)]).eventIndex, 3);
  // Without coalescing the merged delta is a gap.
  assert.equal(refusal(new Numbering(false), [start(1), textStart(2), delta(5)]).eventIndex, 2);
});

test("the first event says whether the stream is numbered, and every event follows it", {
  timeout: TEST_TIMEOUT,
}, () => {
  const unnumbered = new Numbering();
  assert.deepEqual(admitted(unnumbered, [start(0), textStart(0), delta(0)]), [true, true, true]);
  assert.equal(unnumbered.last, 0n);
  const late = refusal(new Numbering(), [start(0), textStart(0), delta(3)]);
  assert.deepEqual([late.eventIndex, late.ruleId], [2, "sequence"]);
  const missing = refusal(new Numbering(), [start(1), textStart(2), delta(0)]);
  assert.deepEqual([missing.eventIndex, missing.ruleId], [2, "sequence"]);
  assert.match(missing.detail, /without a number/);
});
