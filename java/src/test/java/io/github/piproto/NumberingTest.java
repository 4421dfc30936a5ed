package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static io.github.piproto.Fixtures.start;
import static io.github.piproto.Fixtures.textDelta;
import static io.github.piproto.Fixtures.textEnd;
import static io.github.piproto.Fixtures.textStart;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StreamRule;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Rule {@code sequence}: repeats are dropped, gaps fail, merged deltas pass when coalesced. */
class NumberingTest {
  private static ModelEvent numbered(ModelEvent event, long seq) {
    return event.toBuilder().setSeq(seq).build();
  }

  /** The rule {@code event} breaks at {@code index}, as "index rule-id". */
  private static String broken(Numbering numbering, ModelEvent event, int index) {
    StreamProtocolException error =
        assertThrows(StreamProtocolException.class, () -> numbering.admit(event, index));
    assertEquals(StreamRule.STREAM_RULE_SEQUENCE, error.rule());
    return error.eventIndex() + " " + error.ruleId();
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void eachEventInOrderIsAppliedAndLastFollowsIt() {
    Numbering numbering = new Numbering();
    assertEquals(0, numbering.last());
    assertTrue(numbering.admit(numbered(start(), 1), 0));
    assertTrue(numbering.admit(numbered(textStart(0), 2), 1));
    assertTrue(numbering.admit(numbered(textDelta(0, "Hi"), 3), 2));
    assertEquals(3, numbering.last());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aRepeatIsDroppedWithoutMovingLast() {
    Numbering numbering = new Numbering();
    numbering.admit(numbered(start(), 1), 0);
    numbering.admit(numbered(textStart(0), 2), 1);
    numbering.admit(numbered(textDelta(0, "Hel"), 3), 2);
    assertFalse(numbering.admit(numbered(textStart(0), 2), 3)); // a resumed server sent it again
    assertFalse(numbering.admit(numbered(textDelta(0, "Hel"), 3), 3));
    assertEquals(3, numbering.last());
    assertTrue(numbering.admit(numbered(textDelta(0, "lo"), 4), 3));
    assertEquals(4, numbering.last());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aGapFailsAtTheIndexTheEventWouldHaveHad() {
    Numbering numbering = new Numbering();
    numbering.admit(numbered(start(), 1), 0);
    numbering.admit(numbered(textStart(0), 2), 1);
    numbering.admit(numbered(textDelta(0, "Hel"), 3), 2);
    assertEquals("3 sequence", broken(numbering, numbered(textDelta(0, "world"), 5), 3));
    assertEquals(3, numbering.last());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aMergedDeltaMaySkipNumbersOnlyWhenTheCallAskedForCoalescing() {
    Numbering coalesced = new Numbering(true);
    coalesced.admit(numbered(start(), 1), 0);
    coalesced.admit(numbered(textStart(0), 2), 1);
    assertTrue(coalesced.admit(numbered(textDelta(0, "Hello"), 5), 2)); // deltas 3 to 5 merged
    assertEquals(5, coalesced.last());
    assertEquals("3 sequence", broken(coalesced, numbered(textEnd(0), 7), 3)); // not a delta

    Numbering plain = new Numbering(false);
    plain.admit(numbered(start(), 1), 0);
    plain.admit(numbered(textStart(0), 2), 1);
    assertEquals("2 sequence", broken(plain, numbered(textDelta(0, "Hello"), 5), 2));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aStreamIsNumberedThroughoutOrNotAtAll() {
    Numbering numbered = new Numbering();
    numbered.admit(numbered(start(), 1), 0);
    assertEquals("1 sequence", broken(numbered, textStart(0), 1));

    Numbering unnumbered = new Numbering();
    assertTrue(unnumbered.admit(start(), 0));
    assertTrue(unnumbered.admit(textStart(0), 1));
    assertEquals("2 sequence", broken(unnumbered, numbered(textDelta(0, "Hi"), 3), 2));
    assertEquals(0, unnumbered.last());
  }
}
