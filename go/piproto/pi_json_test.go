package piproto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
	"google.golang.org/protobuf/proto"
)

const fixtures = "../../tests/fixtures"

// sessionFiles is every session file of the fixtures: pi 1.6's own, a real session of an older
// pi, and the shapes older pis wrote.
func sessionFiles(t *testing.T) []string {
	t.Helper()
	files := append(pi16SessionFiles(t),
		filepath.Join(fixtures, "pi-sessions", "before-compaction.jsonl"),
		filepath.Join(fixtures, "older-pi-shapes.jsonl"))
	if len(files) < 17 {
		t.Fatalf("only %d session files", len(files))
	}
	return files
}

// pi16SessionFiles is the session files pi-coding-agent 1.6 wrote itself (events-json-mode.jsonl
// holds events, not entries).
func pi16SessionFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(fixtures, "pi-1.6-sessions", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sessions := files[:0]
	for _, file := range files {
		if filepath.Base(file) != "events-json-mode.jsonl" {
			sessions = append(sessions, file)
		}
	}
	return sessions
}

func lines(t *testing.T, file string) [][]byte {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(text, []byte("\n")), []byte("\n"))
}

// throughTheWire is message encoded and decoded again, as a saved transcript holds it.
func throughTheWire[M proto.Message](t *testing.T, message M) M {
	t.Helper()
	data, err := proto.Marshal(message)
	if err != nil {
		t.Fatal(err)
	}
	decoded := message.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(data, decoded); err != nil {
		t.Fatal(err)
	}
	return decoded
}

// Text, not just value: key order, absent keys, numbers as JavaScript writes them, all kept.
func TestEveryLinePiWroteComesBackByteForByte(t *testing.T) {
	for _, file := range sessionFiles(t) {
		for number, line := range lines(t, file) {
			entry, err := piproto.EntryFromPi(line)
			if err != nil {
				t.Fatalf("%s:%d: %v", file, number+1, err)
			}
			written, err := piproto.EntryToPi(throughTheWire(t, entry))
			if err != nil {
				t.Fatalf("%s:%d: %v", file, number+1, err)
			}
			if !bytes.Equal(written, line) {
				t.Errorf("%s:%d changed:\n got %s\nwant %s", file, number+1, written, line)
			}
		}
	}
}

func TestASessionFileIsReadAndWrittenWhole(t *testing.T) {
	file := filepath.Join(fixtures, "pi-1.6-sessions", "compaction.jsonl")
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text = append([]byte("\n"), text...) // a blank line is kept, named in a warning
	entries, warnings, err := piproto.ReadSession(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(lines(t, file))+1 || entries[0].GetUnparsedLine() != "" || entries[0].GetEntry() == nil {
		t.Fatalf("%d entries for %d lines and a blank one", len(entries), len(lines(t, file)))
	}
	if len(warnings) != 1 || warnings[0].Line != 1 {
		t.Errorf("warnings %v", warnings)
	}
	var out bytes.Buffer
	if err := piproto.WriteSession(&out, entries); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), text) {
		t.Errorf("the file changed:\n%s", out.Bytes())
	}
	kinds := map[string]int{}
	for _, entry := range entries {
		if session := entry.GetSessionEntry(); session != nil {
			kinds[session.GetType()]++
		} else if entry.GetMessage().GetSystem() != nil {
			kinds["system"]++
		}
	}
	if kinds["session"] != 1 || kinds["compaction"] != 1 || kinds["system"] == 0 {
		t.Errorf("entries by kind: %v", kinds)
	}
}

// editSession is the README's example: a session file read, edited and written.
func editSession(path string, out io.Writer) error {
	// README session example: begin
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	entries, warnings, err := piproto.ReadSession(bytes.NewReader(text)) // an *aiv1.TranscriptEntry a line
	if err != nil {
		return err // "line 12: message.content[0].type: expected 'text' or 'image', got string \"video\""
	}
	for _, warning := range warnings { // a line that is not one JSON entry, kept as it is
		fmt.Fprintf(os.Stderr, "%s:%d: %s\n", path, warning.Line, warning.Message)
	}
	for _, entry := range entries {
		if usage := entry.GetMessage().GetAssistant().GetUsage(); usage != nil {
			usage.CacheRead = proto.Int64(0) // an edit, written where pi writes the key
		}
	}
	return piproto.WriteSession(out, entries) // each entry's line and a newline
	// README session example: end
}

func TestTheREADMESessionExampleEditsTheFileAsShown(t *testing.T) {
	file := filepath.Join(fixtures, "pi-1.6-sessions", "thinking.jsonl")
	var out bytes.Buffer
	if err := editSession(file, &out); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`"cacheRead":\d+`).ReplaceAll(text, []byte(`"cacheRead":0`))
	if bytes.Equal(want, text) || !bytes.Equal(out.Bytes(), want) {
		t.Errorf("written as\n%s", out.Bytes())
	}
	readmeShows(t, "pi_json_test.go", "session example")
}

// readmeShows fails t unless the README shows, as a go block, the region of the test file marked
// "// README <name>: begin" and "// README <name>: end", one tab deep.
func readmeShows(t *testing.T, file, name string) {
	t.Helper()
	source, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	marker := regexp.QuoteMeta("// README " + name)
	region := regexp.MustCompile(`\n\t` + marker + `: begin\n((?s:.*?))\n\t` + marker + `: end\n`).FindSubmatch(source)
	if region == nil {
		t.Fatalf("%s marks no README %s", file, name)
	}
	example := strings.ReplaceAll("\n"+string(region[1]), "\n\t", "\n")
	if !bytes.Contains(readme, []byte("```go"+example+"\n```")) {
		t.Errorf("the README does not show the %s as tested:%s", name, example)
	}
}

func TestABadLineOfASessionFileIsNamedByItsNumber(t *testing.T) {
	file := "{\"type\":\"session\",\"id\":\"s\"}\n\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"video\"}]}}\n"
	_, _, err := piproto.ReadSession(strings.NewReader(file))
	var refused *piproto.PiJSONError
	if !errors.As(err, &refused) || refused.Path != "message.content[0].type" || !strings.HasPrefix(err.Error(), "line 3: ") {
		t.Errorf("error %v", err)
	}
}

func TestThePrettyPrintedThinkingMessageComesBackEqual(t *testing.T) {
	original, err := os.ReadFile(filepath.Join(fixtures, "pi-sessions", "assistant-message-with-thinking-code.json"))
	if err != nil {
		t.Fatal(err)
	}
	message, err := piproto.MessageFromPi(original)
	if err != nil {
		t.Fatal(err)
	}
	if message.GetAssistant().GetContent()[0].GetThinking().GetThinkingSignature() == "" {
		t.Fatalf("no signed thinking block first: %v", message)
	}
	written, err := piproto.MessageToPi(throughTheWire(t, message))
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(original, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(written, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the message changed:\n%s", written)
	}
}

// pi's json mode: each message_update carries an AssistantMessageEvent without partial; read,
// applied (so an *_end event's content can be written) and written back as pi wrote it.
func TestPi16DeltaOnlyEventsComeBackByteForByte(t *testing.T) {
	var accumulator *piproto.Accumulator
	updates := 0
	for number, line := range lines(t, filepath.Join(fixtures, "pi-1.6-sessions", "events-json-mode.jsonl")) {
		var event struct {
			Type    string          `json:"type"`
			Message json.RawMessage `json:"message"`
			Update  json.RawMessage `json:"assistantMessageEvent"`
		}
		if err := json.Unmarshal(line, &event); err != nil {
			t.Fatal(err)
		}
		if event.Type == "message_start" && bytes.HasPrefix(event.Message, []byte(`{"role":"assistant"`)) {
			header, err := piproto.AssistantFromPi(event.Message)
			if err != nil {
				t.Fatalf("line %d: %v", number+1, err)
			}
			accumulator = piproto.NewAccumulator()
			if err := accumulator.Apply(&aiv1.ModelEvent{Event: &aiv1.ModelEvent_Start{Start: &aiv1.StartEvent{Header: header}}}); err != nil {
				t.Fatal(err)
			}
		}
		if event.Type != "message_update" {
			continue
		}
		update, err := piproto.EventFromPi(event.Update)
		if err != nil {
			t.Fatalf("line %d: %v", number+1, err)
		}
		if update.GetPartial() != nil {
			t.Fatalf("line %d: a partial read from a delta-only event", number+1)
		}
		if err := accumulator.Apply(update); err != nil {
			t.Fatalf("line %d: %v", number+1, err)
		}
		written, err := piproto.EventToPi(update, piproto.DeltaOnly)
		if err != nil {
			t.Fatalf("line %d: %v", number+1, err)
		}
		if !bytes.Equal(written, event.Update) {
			t.Errorf("line %d:\n got %s\nwant %s", number+1, written, event.Update)
		}
		updates++
	}
	if updates != 25 {
		t.Errorf("%d updates", updates)
	}
	if got := piproto.TextOf(accumulator.Partial()); got != "README 的标题就是项目名：tiny-pi。" {
		t.Errorf("the partial's text is %q", got)
	}
}

func TestAnEventWithItsPartialComesBack(t *testing.T) {
	text := `{"type":"text_end","contentIndex":0,"content":"hi","partial":{"role":"assistant","content":[{"type":"text","text":"hi","textSignature":"s"}],"api":"a","provider":"p","model":"m","timestamp":1}}`
	event, err := piproto.EventFromPi([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if event.GetTextEnd().GetTextSignature() != "s" || event.GetPartial().GetModel() != "m" {
		t.Fatalf("read as %v", event)
	}
	written, err := piproto.EventToPi(event, piproto.WithPartial)
	if err != nil || string(written) != text {
		t.Errorf("written as %s (%v)", written, err)
	}
	written, err = piproto.EventToPi(event, piproto.DeltaOnly)
	if want := `{"type":"text_end","contentIndex":0,"content":"hi","contentSignature":"s"}`; err != nil || string(written) != want {
		t.Errorf("written delta-only as %s (%v)", written, err)
	}
}

// Each bad value is refused at its JavaScript-style path.
func TestBadPiJSONIsRefusedAtThePathOfTheBadValue(t *testing.T) {
	assistant := `"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1`
	for _, bad := range []struct{ text, path string }{
		{`{"role":"user","content":[{"type":"text","text":"a"},{"type":"video"}],"timestamp":1}`, "content[1].type"},
		{`{"role":"user","content":"hi","timestamp":1.5}`, "timestamp"},
		{`{"role":"user","content":"hi","timestamp":"1"}`, "timestamp"},
		{`{"role":"user","content":[{"type":"image","data":"AB","mimeType":"image/png"}]}`, "content[0].data"},
		{`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":[1]}],` + assistant + `}`, "content[0].arguments"},
		{`{"role":"assistant","content":[],"usage":{"cost":{"total":"1"}},` + assistant + `}`, "usage.cost.total"},
		{`{"role":"assistant","content":[],` + assistant + `,"thinkingLevel":"huge"}`, "thinkingLevel"},
		{`{"role":"assistant","content":[],` + assistant + `,"diagnostics":[{"type":"x","timestamp":1,"error":{"message":"m","code":1e300}}]}`, "diagnostics[0].error.code"},
		{`{"role":"toolResult","content":[]}`, "toolCallId"},
		{`{"role":7}`, "role"},
		{`{"content":"hi"}`, ""},
		{`[]`, ""},
		{`{"type":"message","message":{"role":"user","content":[{"type":"text"}]}}`, "message.content[0].text"},
		{`{"role":"system","content":"p","sections":{"a":1}}`, "sections.a"},
	} {
		_, err := piproto.EntryFromPi([]byte(bad.text))
		var refused *piproto.PiJSONError
		if !errors.As(err, &refused) || refused.Path != bad.path {
			t.Errorf("%s: %v, want an error at %q", bad.text, err, bad.path)
		}
	}
	for _, bad := range []struct{ text, path string }{
		{`{"type":"text_delta","contentIndex":-1,"delta":"a"}`, "contentIndex"},
		{`{"type":"text_delta","contentIndex":0,"delta":"a","extra":1}`, ""},
		{`{"type":"done","reason":"stop"}`, "message"},
		{`{"type":"text_end","contentIndex":0,"content":"b","partial":{"role":"assistant","content":[{"type":"text","text":"a"}]}}`, "content"},
	} {
		_, err := piproto.EventFromPi([]byte(bad.text))
		var refused *piproto.PiJSONError
		if !errors.As(err, &refused) || refused.Path != bad.path {
			t.Errorf("%s: %v, want an error at %q", bad.text, err, bad.path)
		}
	}
	if _, err := piproto.MessageFromPi([]byte(`{"role":"user",`)); err == nil || errors.As(err, new(*piproto.PiJSONError)) {
		t.Errorf("text that is not JSON: %v", err)
	}
}

func TestAMessageWithoutPiJSONIsRefusedAtItsField(t *testing.T) {
	sections := &aiv1.SystemMessage{Sections: []*aiv1.SystemSection{{Name: "a"}, {Name: "a"}}}
	for _, bad := range []struct {
		message *aiv1.AgentMessage
		path    string
	}{
		{&aiv1.AgentMessage{}, "AgentMessage"},
		{&aiv1.AgentMessage{Role: &aiv1.AgentMessage_System{System: sections}}, "SystemMessage.sections[1].name"},
		{&aiv1.AgentMessage{Role: &aiv1.AgentMessage_User{User: &aiv1.UserMessage{ExtraJson: "[]"}}}, "UserMessage.extra_json"},
	} {
		_, err := piproto.MessageToPi(bad.message)
		var refused *piproto.PiJSONError
		if !errors.As(err, &refused) || refused.Path != bad.path {
			t.Errorf("%v: %v, want an error at %q", bad.message, err, bad.path)
		}
	}
}

// What the fields say is written: an edit is never undone by a kept value, a key the line
// lacked goes where pi writes it, and the keys pi wrote in its own order keep it.
func TestAnEditedMessageWritesWhatWasSet(t *testing.T) {
	line := `{"type":"message","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"Done."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":1,"output":27,"cacheWrite":135,"totalTokens":49193,"cost":{"input":0.000005,"output":0.000675,"cacheRead":0.024515,"cacheWrite":0.00084375,"total":0.02603875},"cacheWrite1h":100},"stopReason":"stop","timestamp":1765234031893}}`
	entry, err := piproto.EntryFromPi([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	usage := entry.GetMessage().GetAssistant().GetUsage()
	usage.CacheRead = proto.Int64(49030)
	usage.Cost.Input = proto.Float64(1.5e-7)
	written, err := piproto.EntryToPi(entry)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(`"output":27,`, `"output":27,"cacheRead":49030,`, `"input":0.000005`, `"input":1.5e-7`).Replace(line)
	if string(written) != want {
		t.Errorf("written as\n%s\nwant\n%s", written, want)
	}
}

// A lone surrogate (pi writes one when a stream is cut inside a surrogate pair) is read as
// U+10F800 + (surrogate - U+D800), which a protobuf string holds, and written back as pi's
// escape; a character of that range in the text itself comes back as it was.
func TestLoneSurrogatesComeBack(t *testing.T) {
	line := `{"role":"assistant","content":[{"type":"text","text":"cut \ud83d"},{"type":"toolCall","id":"c","name":"n","arguments":{"q\udfff":"\udc00 x"}}],"api":"a","provider":"p","model":"m","stopReason":"error","timestamp":1,"errorMessage":"pair 😀 and ` + "\U0010F83D" + `"}`
	message, err := piproto.MessageFromPi([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	assistant := throughTheWire(t, message).GetAssistant()
	if got := assistant.GetContent()[0].GetText().GetText(); got != "cut \U0010F83D" {
		t.Errorf("text %q", got)
	}
	if got := assistant.GetContent()[1].GetToolCall().GetArgumentsJson(); got != "{\"q\U0010FFFF\":\"\U0010FC00 x\"}" {
		t.Errorf("arguments %q", got)
	}
	if got := assistant.GetErrorMessage(); got != "pair 😀 and \U0010F7FF\U0010F83D" {
		t.Errorf("error message %q", got)
	}
	written, err := piproto.MessageToPi(&aiv1.AgentMessage{Role: &aiv1.AgentMessage_Assistant{Assistant: assistant}})
	if err != nil || string(written) != line {
		t.Errorf("written as %s (%v)", written, err)
	}
}

// Numbers are JavaScript's: read as doubles, written as Number.prototype.toString writes them.
func TestNumbersAreReadAndWrittenAsJavaScriptDoes(t *testing.T) {
	line := `{"role":"toolResult","toolCallId":"c","content":[],"details":{"a":1.0,"b":9007199254740993,"c":1e21,"d":-0,"e":0.0000015,"f":1e-7,"g":5e-324,"h":1E2},"timestamp":-0}`
	message, err := piproto.MessageFromPi([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	result := message.GetToolResult()
	if want := `{"a":1,"b":9007199254740992,"c":1e+21,"d":0,"e":0.0000015,"f":1e-7,"g":5e-324,"h":100}`; result.GetDetailsJson() != want {
		t.Errorf("details %s", result.GetDetailsJson())
	}
	if result.Timestamp == nil || *result.Timestamp != 0 {
		t.Errorf("timestamp %v", result.Timestamp)
	}
	written, err := piproto.MessageToPi(message)
	if want := `{"role":"toolResult","toolCallId":"c","content":[],"details":` + result.GetDetailsJson() + `,"timestamp":0}`; err != nil || string(written) != want {
		t.Errorf("written as %s (%v)", written, err)
	}
}

// An object whose keys came in another order than pi's usual lists them under $order, and is
// written in it; keys the schema does not model are kept in their places.
func TestKeysComeBackInTheirOrderWithTheUnmodelledOnes(t *testing.T) {
	line := `{"role":"user","timestamp":5,"note":{"x":[1]},"content":[{"text":"a","type":"text","partialJson":"{"}]}`
	message, err := piproto.MessageFromPi([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	user := message.GetUser()
	if want := `{"note":{"x":[1]},"$order":["role","timestamp","note","content"]}`; user.GetExtraJson() != want {
		t.Errorf("extra_json %s", user.GetExtraJson())
	}
	if want := `{"partialJson":"{","$order":["text","type","partialJson"]}`; user.GetContent()[0].GetText().GetExtraJson() != want {
		t.Errorf("the block's extra_json %s", user.GetContent()[0].GetText().GetExtraJson())
	}
	written, err := piproto.MessageToPi(message)
	if err != nil || string(written) != line {
		t.Errorf("written as %s (%v)", written, err)
	}
}
