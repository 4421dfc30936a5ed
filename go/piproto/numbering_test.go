// The numbers of a wire stream's events (rule "sequence"): repeats dropped, gaps refused, merged
// deltas let through when the stream asked for coalesce_deltas. The corpus's resume.yaml pins
// the same through the client.

package piproto_test

import (
	"errors"
	"slices"
	"testing"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
)

// seq is event numbered n.
func seq(n uint64, event *aiv1.ModelEvent) *aiv1.ModelEvent {
	event.Seq = n
	return event
}

// admitAll admits each event in turn, counting the admitted ones as the index of the next, and
// gives what was admitted by number, and the first error.
func admitAll(numbering *piproto.Numbering, events ...*aiv1.ModelEvent) ([]uint64, error) {
	var admitted []uint64
	for _, event := range events {
		ok, err := numbering.Admit(event, len(admitted))
		if err != nil {
			return admitted, err
		}
		if ok {
			admitted = append(admitted, event.GetSeq())
		}
	}
	return admitted, nil
}

func assertSequenceBroken(t *testing.T, err error, index int) {
	t.Helper()
	var broken *piproto.StreamProtocolError
	if !errors.As(err, &broken) || broken.Rule != aiv1.StreamRule_STREAM_RULE_SEQUENCE || broken.RuleID != "sequence" || broken.EventIndex != index {
		t.Fatalf("error %v, want rule sequence at event %d", err, index)
	}
}

func TestARepeatedEventIsDroppedByItsNumber(t *testing.T) {
	numbering := piproto.NewNumbering(false)
	admitted, err := admitAll(numbering,
		seq(1, start(assistantMessage(nil))), seq(2, textStart(0)), seq(3, textDelta(0, "a")),
		seq(2, textStart(0)), seq(3, textDelta(0, "a")), // a resumed server sends these again
		seq(4, textEnd(0)))
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{1, 2, 3, 4}; !slices.Equal(admitted, want) {
		t.Fatalf("admitted %v, want %v", admitted, want)
	}
	if numbering.Last() != 4 {
		t.Fatalf("last %d", numbering.Last())
	}
}

func TestAGapBreaksRuleSequenceAtTheIndexTheEventWouldHave(t *testing.T) {
	numbering := piproto.NewNumbering(false)
	admitted, err := admitAll(numbering,
		seq(1, start(assistantMessage(nil))), seq(2, textStart(0)), seq(3, textDelta(0, "a")), seq(3, textDelta(0, "a")),
		seq(5, textDelta(0, "b")))
	assertSequenceBroken(t, err, 3) // the repeat is not counted
	if len(admitted) != 3 || numbering.Last() != 3 {
		t.Fatalf("admitted %v, last %d", admitted, numbering.Last())
	}
}

func TestAMergedDeltaMaySkipNumbersOnlyWhenTheStreamAskedForCoalescing(t *testing.T) {
	events := func() []*aiv1.ModelEvent {
		return []*aiv1.ModelEvent{seq(1, start(assistantMessage(nil))), seq(2, textStart(0)), seq(5, textDelta(0, "abc")), seq(6, textEnd(0))}
	}
	admitted, err := admitAll(piproto.NewNumbering(true), events()...)
	if err != nil || !slices.Equal(admitted, []uint64{1, 2, 5, 6}) {
		t.Fatalf("coalesced: admitted %v, %v", admitted, err)
	}
	_, err = admitAll(piproto.NewNumbering(false), events()...)
	assertSequenceBroken(t, err, 2)
	// Only a delta merges: an end that skips a number is a gap even when coalescing.
	_, err = admitAll(piproto.NewNumbering(true), seq(1, start(assistantMessage(nil))), seq(2, textStart(0)), seq(4, textEnd(0)))
	assertSequenceBroken(t, err, 2)
}

func TestAStreamIsNumberedThroughoutOrNotAtAll(t *testing.T) {
	_, err := admitAll(piproto.NewNumbering(false), seq(1, start(assistantMessage(nil))), textStart(0))
	assertSequenceBroken(t, err, 1)
	_, err = admitAll(piproto.NewNumbering(false), start(assistantMessage(nil)), seq(2, textStart(0)))
	assertSequenceBroken(t, err, 1)
	numbering := &piproto.Numbering{} // the zero value: not coalesced
	admitted, err := admitAll(numbering, start(assistantMessage(nil)), textStart(0), textEnd(0))
	if err != nil || len(admitted) != 3 || numbering.Last() != 0 {
		t.Fatalf("unnumbered: admitted %v, %v, last %d", admitted, err, numbering.Last())
	}
}
