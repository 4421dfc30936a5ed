package piproto_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/proto"
)

// testBound is how long any one test may run.
const testBound = time.Minute

// bound ends the whole run, naming the test, if the test is still running after testBound: a
// test that hangs fails instead of waiting for go test's overall timeout.
func bound(t *testing.T) {
	timer := time.AfterFunc(testBound, func() { panic(fmt.Sprintf("%s ran for more than %v", t.Name(), testBound)) })
	t.Cleanup(func() { timer.Stop() })
}

// Builders for test messages and the events that stream them (as the Python events_of does).

func text(value string) *aiv1.AssistantContent {
	return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_Text{Text: &aiv1.TextContent{Text: value}}}
}

func signedText(value, signature string) *aiv1.AssistantContent {
	block := text(value)
	block.GetText().TextSignature = proto.String(signature)
	return block
}

func thinking(value string, signature *string, redacted *bool) *aiv1.AssistantContent {
	return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_Thinking{Thinking: &aiv1.ThinkingContent{
		Thinking: value, ThinkingSignature: signature, Redacted: redacted,
	}}}
}

func toolCall(id, name string, args map[string]any) *aiv1.AssistantContent {
	data, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_ToolCall{ToolCall: &aiv1.ToolCall{
		Id: id, Name: name, ArgumentsJson: string(data),
	}}}
}

func rawToolCall(id, name, argumentsJSON string) *aiv1.AssistantContent {
	return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_ToolCall{ToolCall: &aiv1.ToolCall{
		Id: id, Name: name, ArgumentsJson: argumentsJSON,
	}}}
}

// assistantMessage is a finished message of the scripted model, stopped by STOP unless edit
// changes it.
func assistantMessage(content []*aiv1.AssistantContent, edits ...func(*aiv1.AssistantMessage)) *aiv1.AssistantMessage {
	message := &aiv1.AssistantMessage{
		Api:        "scripted",
		Provider:   "scripted",
		Model:      "scripted-v1",
		Usage:      &aiv1.Usage{},
		StopReason: aiv1.StopReason_STOP_REASON_STOP,
		Timestamp:  1,
		Content:    content,
	}
	for _, edit := range edits {
		edit(message)
	}
	return message
}

func stoppedBy(reason aiv1.StopReason) func(*aiv1.AssistantMessage) {
	return func(message *aiv1.AssistantMessage) { message.StopReason = reason }
}

func failedWith(reason aiv1.StopReason, errorMessage string) func(*aiv1.AssistantMessage) {
	return func(message *aiv1.AssistantMessage) {
		message.StopReason = reason
		message.ErrorMessage = proto.String(errorMessage)
	}
}

// userMessage is a transcript entry holding one user text.
func userMessage(value string) *aiv1.AgentMessage {
	return &aiv1.AgentMessage{Role: &aiv1.AgentMessage_User{User: &aiv1.UserMessage{
		Content:   []*aiv1.UserContent{{Block: &aiv1.UserContent_Text{Text: &aiv1.TextContent{Text: value}}}},
		Timestamp: 1,
	}}}
}

// userContext is a context holding one user message: what `pi-proto stream` sends.
func userContext(value string) *aiv1.AgentContext {
	return &aiv1.AgentContext{Messages: []*aiv1.AgentMessage{userMessage(value)}}
}

func start(header *aiv1.AssistantMessage) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_Start{Start: &aiv1.StartEvent{Header: header}}}
}

func textStart(index uint32) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_TextStart{TextStart: &aiv1.TextStartEvent{ContentIndex: index}}}
}

func textDelta(index uint32, delta string) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_TextDelta{TextDelta: &aiv1.TextDeltaEvent{ContentIndex: index, Delta: delta}}}
}

func textEnd(index uint32) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_TextEnd{TextEnd: &aiv1.TextEndEvent{ContentIndex: index}}}
}

func done(message *aiv1.AssistantMessage) *aiv1.ModelEvent {
	return doneWith(message.GetStopReason(), message)
}

func doneWith(reason aiv1.StopReason, message *aiv1.AssistantMessage) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_Done{Done: &aiv1.DoneEvent{Reason: reason, Message: message}}}
}

func errorEvent(reason aiv1.StopReason, message *aiv1.AssistantMessage) *aiv1.ModelEvent {
	return &aiv1.ModelEvent{Event: &aiv1.ModelEvent_Error{Error: &aiv1.ErrorEvent{Reason: reason, Message: message}}}
}

// eventsOf is the events that stream message: start, each block's start/deltas/end, then the
// terminal event carrying message itself. Deltas hold size characters (code points, as in
// Python).
func eventsOf(message *aiv1.AssistantMessage, size int) []*aiv1.ModelEvent {
	header := &aiv1.AssistantMessage{
		Api: message.Api, Provider: message.Provider, Model: message.Model, Timestamp: message.Timestamp, Usage: &aiv1.Usage{},
	}
	events := []*aiv1.ModelEvent{start(header)}
	for i, content := range message.Content {
		index := uint32(i)
		switch block := content.Block.(type) {
		case *aiv1.AssistantContent_Text:
			events = append(events, textStart(index))
			for _, delta := range chunks(block.Text.Text, size) {
				events = append(events, textDelta(index, delta))
			}
			events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_TextEnd{TextEnd: &aiv1.TextEndEvent{
				ContentIndex: index, TextSignature: block.Text.TextSignature,
			}}})
		case *aiv1.AssistantContent_Thinking:
			events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ThinkingStart{ThinkingStart: &aiv1.ThinkingStartEvent{ContentIndex: index}}})
			for _, delta := range chunks(block.Thinking.Thinking, size) {
				events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ThinkingDelta{ThinkingDelta: &aiv1.ThinkingDeltaEvent{ContentIndex: index, Delta: delta}}})
			}
			events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ThinkingEnd{ThinkingEnd: &aiv1.ThinkingEndEvent{
				ContentIndex: index, ThinkingSignature: block.Thinking.ThinkingSignature, Redacted: block.Thinking.Redacted,
			}}})
		case *aiv1.AssistantContent_ToolCall:
			call := block.ToolCall
			events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallStart{ToolcallStart: &aiv1.ToolCallStartEvent{
				ContentIndex: index, Id: call.Id, Name: call.Name,
			}}})
			raw := call.ArgumentsJson
			if call.RawArguments != nil {
				raw = *call.RawArguments
			}
			for _, delta := range chunks(raw, size) {
				events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallDelta{ToolcallDelta: &aiv1.ToolCallDeltaEvent{ContentIndex: index, Delta: delta}}})
			}
			events = append(events, &aiv1.ModelEvent{Event: &aiv1.ModelEvent_ToolcallEnd{ToolcallEnd: &aiv1.ToolCallEndEvent{
				ContentIndex: index, ToolCall: proto.Clone(call).(*aiv1.ToolCall),
			}}})
		default:
			panic(fmt.Sprintf("content[%d] has no block set", i))
		}
	}
	switch message.StopReason {
	case aiv1.StopReason_STOP_REASON_ERROR, aiv1.StopReason_STOP_REASON_ABORTED:
		events = append(events, errorEvent(message.StopReason, message))
	default:
		events = append(events, done(message))
	}
	return events
}

func chunks(value string, size int) []string {
	points := []rune(value)
	var out []string
	for start := 0; start < len(points); start += size {
		out = append(out, string(points[start:min(start+size, len(points))]))
	}
	return out
}

// Python's `pi-proto serve`, run as a child process for the client tests.

// repoRoot is the repository's root: the tests run in go/.
var repoRoot, _ = filepath.Abs("..")

var piProto = filepath.Join(repoRoot, ".venv", "bin", "pi-proto")

type server struct {
	target  string
	cmd     *exec.Cmd
	exited  chan struct{}
	stopped sync.Once
}

var listening = regexp.MustCompile(`^listening on (\S+)$`)

// startServer starts `pi-proto serve --port 0 args...` and waits for its "listening on
// HOST:PORT" line; the test's cleanup kills it if the test has not stopped it.
func startServer(t testing.TB, args ...string) *server {
	t.Helper()
	s, err := launchServer(args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(syscall.SIGKILL) })
	return s
}

func launchServer(args ...string) (*server, error) {
	if _, err := os.Stat(piProto); err != nil {
		return nil, fmt.Errorf("the client tests need Python's pi-proto in %s: run `make setup` first (%w)", piProto, err)
	}
	cmd := exec.Command(piProto, append([]string{"serve", "--port", "0"}, args...)...)
	cmd.Dir = repoRoot
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, exited: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		if scanner.Scan() {
			lines <- scanner.Text()
		}
		close(lines)
		for scanner.Scan() {
		}
		_ = cmd.Wait()
		close(s.exited)
	}()
	select {
	case line := <-lines:
		if match := listening.FindStringSubmatch(line); match != nil {
			s.target = match[1]
			return s, nil
		}
		s.stop(syscall.SIGKILL)
		return nil, fmt.Errorf("pi-proto serve printed %q instead of \"listening on HOST:PORT\"", line)
	case <-time.After(30 * time.Second):
		s.stop(syscall.SIGKILL)
		return nil, fmt.Errorf("pi-proto serve did not start within 30 s")
	}
}

// stop sends signal (unless the server has exited) and waits for the process to exit.
func (s *server) stop(signal syscall.Signal) {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(signal)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// runPiProto runs `pi-proto args...` to completion and returns its standard output.
func runPiProto(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, piProto, args...)
	cmd.Dir = repoRoot
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("pi-proto %v: %w", args, err)
	}
	return string(out), nil
}

// The servers most client tests share, started once for the package and stopped by TestMain.
var (
	sharedMu      sync.Mutex
	sharedServers = map[string]*server{}
)

// sharedServer is `pi-proto serve args...`, started on first use.
func sharedServer(t testing.TB, args ...string) *server {
	t.Helper()
	key := fmt.Sprint(args)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if s, ok := sharedServers[key]; ok {
		return s
	}
	s, err := launchServer(args...)
	if err != nil {
		t.Fatal(err)
	}
	sharedServers[key] = s
	return s
}

// fastServer plays the README round trip in deltas of 8 characters, without delay.
func fastServer(t testing.TB) *server { return sharedServer(t) }

// slowServer plays the same with 0.3 s before each event.
func slowServer(t testing.TB) *server { return sharedServer(t, "--delay", "0.3") }

func TestMain(m *testing.M) {
	code := m.Run()
	sharedMu.Lock()
	for _, s := range sharedServers {
		s.stop(syscall.SIGTERM)
	}
	sharedMu.Unlock()
	os.Exit(code)
}
