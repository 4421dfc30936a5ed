package piproto

import (
	"fmt"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
)

// Numbering decides which events of a wire stream to apply, by their numbers (ModelEvent.seq,
// rule "sequence"): each once, none missing.
//
// The first event says whether the stream is numbered. In a numbered one, an event numbered at or
// below the last applied is a repeat, which a resumed server may send, and is dropped; one
// further on than the next breaks rule "sequence", except a merged delta when the stream asked
// for coalesce_deltas. An unnumbered event in a numbered stream, or a numbered one in a stream
// that is not, breaks it too. [Numbering.Last] is what a client resumes after. The zero value is
// a Numbering of a stream that did not ask for coalesce_deltas. A Numbering is not safe for
// concurrent use.
type Numbering struct {
	// Coalesced says the stream asked for coalesce_deltas: a delta may carry the number of the
	// last of the deltas it merges, skipping theirs.
	Coalesced bool

	last     uint64
	decided  bool // whether the first event has come
	numbered bool
}

// NewNumbering returns the Numbering of a stream that asked for coalesce_deltas, or not.
func NewNumbering(coalesced bool) *Numbering {
	return &Numbering{Coalesced: coalesced}
}

// Last is the number of the last event admitted; 0 before any, and in a stream not numbered.
func (n *Numbering) Last() uint64 { return n.last }

// Admit reports whether to apply event, whose index (the count of events applied before it)
// names it in a failure: false for a repeat, which is to be dropped uncounted; a
// *[StreamProtocolError] with rule "sequence" for an event that does not fit the numbers so far.
func (n *Numbering) Admit(event *aiv1.ModelEvent, index int) (bool, error) {
	seq := event.GetSeq()
	if !n.decided {
		n.decided, n.numbered = true, seq != 0
	}
	if !n.numbered {
		if seq != 0 {
			return false, newStreamProtocolError(index, aiv1.StreamRule_STREAM_RULE_SEQUENCE, fmt.Sprintf("event numbered %d in a stream not numbered", seq))
		}
		return true, nil
	}
	if seq == 0 {
		return false, newStreamProtocolError(index, aiv1.StreamRule_STREAM_RULE_SEQUENCE, "event without a number in a numbered stream")
	}
	if seq <= n.last {
		return false, nil
	}
	merged := n.Coalesced && isDelta(event) // a delta may carry the number of the last it merges
	if seq != n.last+1 && !merged {
		return false, newStreamProtocolError(index, aiv1.StreamRule_STREAM_RULE_SEQUENCE, fmt.Sprintf("event %d is missing: the next event is numbered %d", n.last+1, seq))
	}
	n.last = seq
	return true, nil
}

// isDelta reports whether event is a text, thinking or tool-call delta: the events a server may
// merge.
func isDelta(event *aiv1.ModelEvent) bool {
	switch event.GetEvent().(type) {
	case *aiv1.ModelEvent_TextDelta, *aiv1.ModelEvent_ThinkingDelta, *aiv1.ModelEvent_ToolcallDelta:
		return true
	}
	return false
}
