package piproto_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// body is the typed body of a session entry, nil for an entry of a type without one.
func body(session *aiv1.SessionEntry) protoreflect.Message {
	entry := session.ProtoReflect()
	field := entry.WhichOneof(entry.Descriptor().Oneofs().ByName("body"))
	if field == nil {
		return nil
	}
	return entry.Get(field).Message()
}

func readSessionFile(t *testing.T, name string) []*aiv1.TranscriptEntry {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(fixtures, "pi-1.6-sessions", name))
	if err != nil {
		t.Fatal(err)
	}
	entries, warnings, err := piproto.ReadSession(bytes.NewReader(text))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%s: %v, %v", name, err, warnings)
	}
	return entries
}

// Excerpts of two session files pi committed to its own repository, each with a line that holds
// two entries with no newline between them (tests/fixtures/pi-sessions/README.md).
func TestEntriesRunTogetherAreKeptByteForByteAndNamed(t *testing.T) {
	for name, bad := range map[string]int{"entries-run-together-message.jsonl": 4, "entries-run-together-compaction.jsonl": 5} {
		text, err := os.ReadFile(filepath.Join(fixtures, "pi-sessions", name))
		if err != nil {
			t.Fatal(err)
		}
		entries, warnings, err := piproto.ReadSession(bytes.NewReader(text))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(warnings) != 1 || warnings[0].Line != bad || entries[bad-1].GetEntry() == nil || entries[bad-1].GetUnparsedLine() == "" {
			t.Fatalf("%s: warnings %v", name, warnings)
		}
		for i, entry := range entries { // through the wire
			wire, err := proto.Marshal(entry)
			if err != nil {
				t.Fatal(err)
			}
			entries[i] = &aiv1.TranscriptEntry{}
			if err := proto.Unmarshal(wire, entries[i]); err != nil {
				t.Fatal(err)
			}
		}
		var out bytes.Buffer
		if err := piproto.WriteSession(&out, entries); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), text) {
			t.Errorf("%s changed", name)
		}
	}
	// A carriage return before the newline is the line's own byte, kept.
	entries, _, err := piproto.ReadSession(strings.NewReader("}{\r\n"))
	if err != nil || len(entries) != 1 || entries[0].GetUnparsedLine() != "}{\r" {
		t.Errorf("entries %v, %v", entries, err)
	}
	// One holding a newline would be two lines: not written.
	two := &aiv1.TranscriptEntry{Entry: &aiv1.TranscriptEntry_UnparsedLine{UnparsedLine: "a\nb"}}
	if err := piproto.WriteSession(io.Discard, []*aiv1.TranscriptEntry{two}); err == nil {
		t.Error("a line with a newline inside was written")
	}
}

// No entry of pi's own types is left as JSON text: each has its body, its id and its timestamp,
// and a message entry's envelope is typed too (nothing left in session_json).
func TestEveryEntryPi16WroteIsTyped(t *testing.T) {
	types := map[string]bool{}
	for _, file := range pi16SessionFiles(t) {
		at := filepath.Base(file)
		for number, line := range lines(t, file) {
			entry, err := piproto.EntryFromPi(line)
			if err != nil {
				t.Fatalf("%s:%d: %v", at, number+1, err)
			}
			if entry.Id == nil || entry.Timestamp == nil {
				t.Errorf("%s:%d: id %v, timestamp %v", at, number+1, entry.Id, entry.Timestamp)
			}
			session := entry.GetSessionEntry()
			if session == nil {
				if entry.GetSessionJson() != "" {
					t.Errorf("%s:%d: the envelope is left as %s", at, number+1, entry.GetSessionJson())
				}
				continue
			}
			types[session.GetType()] = true
			typed := body(session)
			if typed == nil {
				t.Errorf("%s:%d: a %s entry is untyped: %s", at, number+1, session.GetType(), session.GetFieldsJson())
				continue
			}
			extra := typed.Get(typed.Descriptor().Fields().ByName("extra_json")).String()
			if session.GetFieldsJson() != "" || extra != "" {
				t.Errorf("%s:%d: keys left untyped: fields_json %q, extra_json %q", at, number+1, session.GetFieldsJson(), extra)
			}
		}
	}
	for _, kind := range []string{
		"session", "model_change", "thinking_level_change", "compaction", "branch_summary", "custom",
		"custom_message", "label", "session_info", "context_edit",
	} {
		if !types[kind] {
			t.Errorf("no %s entry in the fixtures", kind)
		}
	}
}

// branch.jsonl: the tree is walked by id and parent alone. The header is the session's, not the
// tree's; there is one root, each parent is an earlier entry, the tree does branch, and the
// branch summary's fromId is in it.
func TestASessionTreeIsWalkedByIDAndParent(t *testing.T) {
	entries := readSessionFile(t, "branch.jsonl")
	if header := entries[0]; header.GetSessionEntry().GetHeader().GetVersion() != 3 || header.GetParent() != nil {
		t.Fatalf("the header: %v", header)
	}
	seen := map[string]bool{}
	children := map[string]int{}
	roots := 0
	for i, entry := range entries[1:] {
		switch parent := entry.GetParent().(type) {
		case *aiv1.TranscriptEntry_Root:
			roots++
		case *aiv1.TranscriptEntry_ParentId:
			if !seen[parent.ParentId] {
				t.Errorf("entry %d: parent %q is not an earlier entry", i+1, parent.ParentId)
			}
			children[parent.ParentId]++
		default:
			t.Errorf("entry %d has no parent", i+1)
		}
		if entry.Id == nil || seen[entry.GetId()] {
			t.Fatalf("entry %d: id %v", i+1, entry.Id)
		}
		seen[entry.GetId()] = true
	}
	if roots != 1 {
		t.Errorf("%d roots", roots)
	}
	branches := 0
	for _, count := range children {
		if count > 1 {
			branches++
		}
	}
	if branches == 0 {
		t.Errorf("no entry has two children: %v", children)
	}
	var summaries []*aiv1.BranchSummary
	for _, entry := range entries {
		if summary := entry.GetSessionEntry().GetBranchSummary(); summary != nil {
			summaries = append(summaries, summary)
		}
	}
	if len(summaries) != 1 || !seen[summaries[0].GetFromId()] || summaries[0].GetUsage().GetTotalTokens() != 52 {
		t.Errorf("branch summaries %v", summaries)
	}
}

// An entry of a type this schema has no body for keeps its other keys in fields_json (with their
// own order when it is not pi's), its place typed, and comes back as it was.
func TestAnUnknownEntryTypeRoundTripsWithItsPlaceTyped(t *testing.T) {
	for _, want := range []struct {
		line, fields string
		parent       func(*aiv1.TranscriptEntry) bool
	}{{
		`{"type":"bookmark","id":"77aa88bb","parentId":null,"timestamp":"2026-12-02T06:20:00.487Z","note":"here","at":[1,2.5]}`,
		`{"note":"here","at":[1,2.5]}`,
		func(entry *aiv1.TranscriptEntry) bool {
			return entry.GetRoot() == structpb.NullValue_NULL_VALUE && entry.GetParent() != nil
		},
	}, {
		`{"type":"bookmark","note":"here","id":"77aa88bb","timestamp":"2026-12-02T06:20:00.487Z","parentId":"74d38200"}`,
		`{"note":"here","$order":["type","note","id","timestamp","parentId"]}`,
		func(entry *aiv1.TranscriptEntry) bool { return entry.GetParentId() == "74d38200" },
	}} {
		entry, err := piproto.EntryFromPi([]byte(want.line))
		if err != nil {
			t.Fatal(err)
		}
		entry = throughTheWire(t, entry)
		session := entry.GetSessionEntry()
		if session.GetType() != "bookmark" || body(session) != nil || session.GetFieldsJson() != want.fields {
			t.Errorf("%s: read as %v", want.line, session)
		}
		if entry.GetId() != "77aa88bb" || entry.GetTimestamp() != "2026-12-02T06:20:00.487Z" || !want.parent(entry) {
			t.Errorf("%s: placed as %v", want.line, entry)
		}
		written, err := piproto.EntryToPi(entry)
		if err != nil || string(written) != want.line {
			t.Errorf("written as %s (%v)", written, err)
		}
	}
}

// What a typed entry's fields say is written, in pi's order for its type: a label changed and the
// entry moved to another parent, a label cleared, and an extension's entry built from nothing
// (pi writes its id, parentId and timestamp last).
func TestAnEditedSessionEntryWritesWhatWasSet(t *testing.T) {
	line := `{"type":"label","id":"74d38200","parentId":"50667f34","timestamp":"2026-12-02T06:19:59.678Z","targetId":"50667f34","label":"checkpoint-1"}`
	entry, err := piproto.EntryFromPi([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	// README entry edit: begin
	label := entry.GetSessionEntry().GetLabel() // {"type":"label",...,"label":"checkpoint-1"}
	label.Label = proto.String("checkpoint-2")
	entry.Parent = &aiv1.TranscriptEntry_ParentId{ParentId: "74d38100"}
	written, err := piproto.EntryToPi(entry) // {"type":"label","id":...,"parentId":"74d38100",...,"label":"checkpoint-2"}
	// README entry edit: end
	want := `{"type":"label","id":"74d38200","parentId":"74d38100","timestamp":"2026-12-02T06:19:59.678Z","targetId":"50667f34","label":"checkpoint-2"}`
	if err != nil || string(written) != want {
		t.Errorf("written as\n%s (%v)\nwant\n%s", written, err, want)
	}
	label.Label = nil
	written, err = piproto.EntryToPi(entry)
	if want := strings.TrimSuffix(want, `,"label":"checkpoint-2"}`) + "}"; err != nil || string(written) != want {
		t.Errorf("cleared, written as %s (%v)", written, err)
	}
	custom := &aiv1.TranscriptEntry{
		Entry: &aiv1.TranscriptEntry_SessionEntry{SessionEntry: &aiv1.SessionEntry{Type: "custom", Body: &aiv1.SessionEntry_Custom{
			Custom: &aiv1.CustomEntry{CustomType: proto.String("todo-list"), DataJson: `{"items":[],"done":2}`},
		}}},
		Id:        proto.String("5f0c1a2e"),
		Parent:    &aiv1.TranscriptEntry_Root{},
		Timestamp: proto.String("2026-12-02T06:20:00.487Z"),
	}
	written, err = piproto.EntryToPi(custom)
	want = `{"type":"custom","customType":"todo-list","data":{"items":[],"done":2},"id":"5f0c1a2e","parentId":null,"timestamp":"2026-12-02T06:20:00.487Z"}`
	if err != nil || string(written) != want {
		t.Errorf("built, written as\n%s (%v)\nwant\n%s", written, err, want)
	}
	readmeShows(t, "pi_session_test.go", "entry edit")
}

// A message entry's envelope is typed: nothing is left in session_json, but "{}" for a line with
// nothing but its type and message, which tells it from a bare message.
func TestAMessageEntrysEnvelopeIsTyped(t *testing.T) {
	for _, want := range []struct{ line, sessionJSON string }{
		{`{"type":"message","id":"8bb83bac","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}`, ""},
		{`{"type":"message","message":{"role":"user","content":"hi","timestamp":1}}`, "{}"},
		{`{"type":"message","timestamp":"t","message":{"role":"user","content":"hi","timestamp":1},"note":1}`, `{"note":1}`},
		{`{"role":"user","content":"hi","timestamp":1}`, ""},
	} {
		entry, err := piproto.EntryFromPi([]byte(want.line))
		if err != nil {
			t.Fatal(err)
		}
		if entry.GetSessionJson() != want.sessionJSON || entry.GetMessage().GetUser() == nil {
			t.Errorf("%s: read as %v", want.line, entry)
		}
		written, err := piproto.EntryToPi(throughTheWire(t, entry))
		if err != nil || string(written) != want.line {
			t.Errorf("written as %s (%v)", written, err)
		}
	}
}

// Each bad value of a session line is refused at its path from the line.
func TestABadSessionEntryIsRefusedAtThePathOfTheBadValue(t *testing.T) {
	for _, bad := range []struct{ text, path string }{
		{`{"type":"label","id":"a","parentId":7,"timestamp":"t","targetId":"x"}`, "parentId"},
		{`{"type":"bookmark","id":1}`, "id"},
		{`{"type":"message","timestamp":2,"message":{"role":"user","content":"hi"}}`, "timestamp"},
		{`{"type":"compaction","id":"a","parentId":"b","timestamp":"t","summary":"s","tokensBefore":"52"}`, "tokensBefore"},
		{`{"type":"compaction","id":"a","timestamp":"t","systemMessage":{"role":"system","content":[{"type":"image","data":"","mimeType":"image/png"}]}}`, "systemMessage.content[0].type"},
		{`{"type":"custom_message","customType":"c","content":5}`, "content"},
		{`{"type":"context_edit","targetId":"a","replacement":{"content":[{"type":"video"}]}}`, "replacement.content[0].type"},
		{`{"type":"usage","usage":{"input":"1"}}`, "usage.input"},
	} {
		_, err := piproto.EntryFromPi([]byte(bad.text))
		var refused *piproto.PiJSONError
		if !errors.As(err, &refused) || refused.Path != bad.path {
			t.Errorf("%s: %v, want an error at %q", bad.text, err, bad.path)
		}
	}
	untyped := &aiv1.TranscriptEntry{Entry: &aiv1.TranscriptEntry_SessionEntry{SessionEntry: &aiv1.SessionEntry{Type: "bookmark", FieldsJson: "[]"}}}
	_, err := piproto.EntryToPi(untyped)
	if refused := (*piproto.PiJSONError)(nil); !errors.As(err, &refused) || refused.Path != "SessionEntry.fields_json" {
		t.Errorf("fields_json that is no object: %v", err)
	}
}
