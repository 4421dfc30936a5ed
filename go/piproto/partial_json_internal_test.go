package piproto

import (
	"strings"
	"testing"
)

func TestTheCompletionReadsOnlyTheTextAddedSinceItsLastUpdate(t *testing.T) {
	completion := &partialJSON{}
	if got := completion.update(`{"a": "x`); got != `{"a": "x"}` {
		t.Fatalf("first: %q", got)
	}
	// The first 8 bytes were read already: junk there is not read again, so only `y"}` is, and it
	// ends the object. A completion that read everything again would find no object.
	if got := completion.update(`????????y"}`); got != `????????y"}` {
		t.Fatalf("second: %q", got)
	}
}

func TestACompletionThatDidNotChangeIsTheStringBuiltBefore(t *testing.T) {
	completion := &partialJSON{}
	first := completion.update(`{"a": 1, "long`)
	second := completion.update(`{"a": 1, "longer key`)
	if first != `{"a": 1}` || second != first || strings.Clone(first) != second {
		t.Fatalf("%q then %q", first, second)
	}
	if got := completion.update(`{"a": 1, "longer key": 2`); got != `{"a": 1, "longer key": 2}` {
		t.Fatalf("third: %q", got)
	}
}
