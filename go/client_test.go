// The gRPC client against Python's `pi-proto serve`: the README round trip, cancellation,
// deadlines, status errors, tokens, TLS and servers that are gone.

package piproto_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	piproto "github.com/pi-proto/pi-proto/go"
	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

var readmeKinds = []string{
	"start",
	"text_start",
	"text_delta",
	"text_delta",
	"text_end",
	"toolcall_start",
	"toolcall_delta",
	"toolcall_delta",
	"toolcall_delta",
	"toolcall_end",
	"done",
}

// testContext is a context for one test, ended by its deadline.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newClient(t *testing.T, target string, options ...piproto.ClientOption) *piproto.Client {
	t.Helper()
	client, err := piproto.NewClient(target, options...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func drain(events *piproto.AssistantMessageEventStream) ([]*aiv1.ModelEvent, *aiv1.AssistantMessage) {
	var seen []*aiv1.ModelEvent
	for event := range events.Events() {
		seen = append(seen, event)
	}
	return seen, events.Result(context.Background())
}

func TestTheREADMEExample(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	target := fastServer(t).target
	// README example: begin
	client, err := piproto.NewClient(target) // host:port, where `pi-proto serve` listens
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	events := client.Stream(ctx, &aiv1.AgentContext{Messages: []*aiv1.AgentMessage{{
		Role: &aiv1.AgentMessage_User{User: &aiv1.UserMessage{Content: []*aiv1.UserContent{{
			Block: &aiv1.UserContent_Text{Text: &aiv1.TextContent{Text: "请读取 README"}},
		}}}},
	}}})
	var kinds []string
	for event := range events.Events() { // never fails: a failure arrives as an "error" event
		kinds = append(kinds, piproto.EventKind(event)) // "start", "text_start", "text_delta", ..., "done"
	}
	message := events.Result(ctx) // the AssistantMessage the terminal event carries
	// README example: end
	if !slices.Equal(kinds, readmeKinds) {
		t.Fatalf("kinds %v", kinds)
	}
	if got := piproto.TextOf(message); got != "我先读取项目说明。" {
		t.Fatalf("text %q", got)
	}
}

func TestTheREADMEShowsTheExampleAsTested(t *testing.T) {
	bound(t)
	source, err := os.ReadFile("client_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	region := regexp.MustCompile(`\n(\t*)// README example: begin\n((?s:.*?))\n\t*// README example: end\n`).FindSubmatch(source)
	if region == nil {
		t.Fatal("client_test.go marks no README example")
	}
	indent := string(region[1])
	lines := strings.Split(string(region[2]), "\n")
	for i, line := range lines {
		lines[i] = strings.TrimPrefix(line, indent)
	}
	example := strings.Join(lines, "\n")
	example = strings.Replace(example, "if err != nil {\n\tt.Fatal(err)\n}", "if err != nil {\n\treturn err\n}", 1)
	if !strings.Contains(string(readme), "\n"+example+"\n") {
		t.Fatalf("README.md must show:\n%s", example)
	}
}

func TestTheREADMERoundTripGivesTheSameEventsAsPiProtoStreamJSON(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	target := fastServer(t).target
	printed := make(chan string, 1)
	go func() {
		out, err := runPiProto(ctx, "stream", "--json", "--target", target, "hi")
		if err != nil {
			t.Error(err)
		}
		printed <- out
	}()
	seen, message := drain(newClient(t, target).Stream(ctx, userContext("hi")))

	if got := kinds(seen); !slices.Equal(got, readmeKinds) {
		t.Fatalf("kinds %v", got)
	}
	var python []any
	for _, line := range strings.Split(strings.TrimRight(<-printed, "\n"), "\n") {
		var value any
		if err := json.Unmarshal([]byte(line), &value); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		python = append(python, value)
	}
	var wire []any
	for _, event := range seen {
		sent := proto.Clone(event).(*aiv1.ModelEvent)
		sent.Partial = nil
		data, err := protojson.Marshal(sent)
		if err != nil {
			t.Fatal(err)
		}
		var value any
		_ = json.Unmarshal(data, &value)
		wire = append(wire, value)
	}
	if !reflect.DeepEqual(wire, python) {
		t.Fatalf("events differ:\n go     %v\n python %v", wire, python)
	}

	for _, event := range seen {
		if event.Partial == nil {
			t.Fatalf("%s has no partial", piproto.EventKind(event))
		}
	}
	last := seen[len(seen)-1]
	if last.GetDone().GetMessage() != message || last.Partial != message {
		t.Fatal("the result is not the done event's message")
	}
	if message.StopReason != aiv1.StopReason_STOP_REASON_TOOL_USE || piproto.TextOf(message) != "我先读取项目说明。" {
		t.Fatalf("message %v", message)
	}
	call := callAt(t, message, 1)
	if call.Id != "call_1" || call.Name != "read" {
		t.Fatalf("call %v", call)
	}
	assertJSONEqual(t, call.ArgumentsJson, map[string]any{"path": "README.md"})
}

func TestThePartialIsRebuiltAtEveryStep(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	var steps []*aiv1.AssistantMessage
	var seenKinds []string
	for event := range newClient(t, slowServer(t).target).Stream(ctx, userContext("hi")).Events() {
		seenKinds = append(seenKinds, piproto.EventKind(event))
		steps = append(steps, proto.Clone(event.Partial).(*aiv1.AssistantMessage))
	}
	if !slices.Equal(seenKinds, readmeKinds) {
		t.Fatalf("kinds %v", seenKinds)
	}
	if len(steps[0].Content) != 0 || steps[0].Model != "scripted-v1" {
		t.Fatalf("start: %v", steps[0])
	}
	if piproto.TextOf(steps[2]) != "我先读取项目说明" || piproto.TextOf(steps[3]) != "我先读取项目说明。" {
		t.Fatalf("texts %q, %q", piproto.TextOf(steps[2]), piproto.TextOf(steps[3]))
	}
	var raw []string
	for _, index := range []int{6, 7, 8} {
		call := callAt(t, steps[index], 1)
		if call.Id != "call_1" || call.Name != "read" || call.ArgumentsJson != "{}" {
			t.Fatalf("step %d: %v", index, call)
		}
		raw = append(raw, call.GetRawArguments())
	}
	if want := []string{`{"path":`, `{"path":"README.`, `{"path":"README.md"}`}; !slices.Equal(raw, want) {
		t.Fatalf("raw arguments %q", raw)
	}
	if callAt(t, steps[9], 1).ArgumentsJson != `{"path":"README.md"}` || steps[10].StopReason != aiv1.StopReason_STOP_REASON_TOOL_USE {
		t.Fatalf("end: %v", steps[10])
	}
}

func TestOneClientCarriesAConversation(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	client := newClient(t, fastServer(t).target)
	request := userContext("请读取 README")
	first := client.Stream(ctx, request).Result(ctx)
	call := callAt(t, first, 1)
	result := &aiv1.ToolResultMessage{
		ToolCallId: call.Id,
		ToolName:   call.Name,
		Content:    []*aiv1.ToolResultContent{{Block: &aiv1.ToolResultContent_Text{Text: &aiv1.TextContent{Text: "# pi-proto"}}}},
	}
	conversation := &aiv1.AgentContext{Messages: append(slices.Clone(request.Messages),
		&aiv1.AgentMessage{Role: &aiv1.AgentMessage_Assistant{Assistant: first}},
		&aiv1.AgentMessage{Role: &aiv1.AgentMessage_ToolResult{ToolResult: result}},
	)}
	second := client.Stream(ctx, conversation).Result(ctx)
	if second.StopReason != aiv1.StopReason_STOP_REASON_STOP || piproto.TextOf(second) != "README 的标题就是项目名：pi-proto。" {
		t.Fatalf("second turn %v", second)
	}
}

func TestCancelAfterTheFirstEventEndsTheStreamWithAborted(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	events := newClient(t, slowServer(t).target).Stream(ctx, userContext("hi"))
	first, ok := events.Next(ctx)
	if !ok || piproto.EventKind(first) != "start" {
		t.Fatalf("first %v", first)
	}
	events.Cancel()
	rest, message := drain(events)
	assertKinds(t, rest, "error")
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ABORTED, "cancelled")
	if message.Model != "scripted-v1" { // the header received before the cancellation is kept
		t.Fatalf("message %v", message)
	}
}

func TestCancellingTheContextEndsTheStreamWithAborted(t *testing.T) {
	bound(t)
	ctx, cancel := context.WithCancel(testContext(t))
	events := newClient(t, slowServer(t).target).Stream(ctx, userContext("hi"))
	if first, ok := events.Next(ctx); !ok || piproto.EventKind(first) != "start" {
		t.Fatal("no start event")
	}
	cancel()
	var rest []*aiv1.ModelEvent
	for event, ok := events.Next(ctx); ok; event, ok = events.Next(ctx) {
		rest = append(rest, event)
	}
	assertKinds(t, rest, "error")
	assertStopped(t, events.Result(ctx), aiv1.StopReason_STOP_REASON_ABORTED, "cancelled")

	cancelled, cancelNow := context.WithCancel(testContext(t))
	cancelNow()
	seen, message := drain(newClient(t, slowServer(t).target).Stream(cancelled, userContext("hi")))
	assertKinds(t, seen, "error")
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ABORTED, "cancelled")
}

func TestADeadlineThatPassesEndsTheStreamWithError(t *testing.T) {
	bound(t)
	ctx, cancel := context.WithTimeout(testContext(t), 100*time.Millisecond)
	defer cancel()
	seen, message := drain(newClient(t, slowServer(t).target).Stream(ctx, userContext("hi")))
	assertKinds(t, seen, "error")
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, "context deadline exceeded")
}

func TestAStatusErrorBecomesAnErrorEventWithTheRawStatusMessage(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	seen, message := drain(newClient(t, fastServer(t).target).Stream(ctx, userContext("hi"), piproto.WithModel("gpt-9")))
	assertKinds(t, seen, "error")
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, "unknown model 'gpt-9': this server plays 'scripted-v1'")
}

func TestAnInvalidRequestIsRefusedNamingTheField(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	bad := userContext("hi")
	bad.Tools = []*aiv1.Tool{{Name: "read", ParametersJson: "[]"}}
	_, message := drain(newClient(t, fastServer(t).target).Stream(ctx, bad, piproto.WithGeneration(&aiv1.GenerationOptions{MaxTokens: proto.Int64(16)})))
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, "StreamRequest.context.tools[0].parameters_json: must be a JSON Schema object, got list")

	_, message = drain(newClient(t, fastServer(t).target).Stream(ctx, nil))
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, "StreamRequest.context: required")

	invalidUTF8 := userContext("\xff")
	seen, message := drain(newClient(t, fastServer(t).target).Stream(ctx, invalidUTF8))
	assertKinds(t, seen, "error")
	if message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || !strings.HasPrefix(message.GetErrorMessage(), "invalid request: ") {
		t.Fatalf("message %v", message)
	}
}

func TestNoServerIsAnErrorEventNotAFailure(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	gone := startServer(t)
	gone.stop(syscall.SIGTERM)
	seen, message := drain(newClient(t, gone.target).Stream(ctx, userContext("hi")))
	assertKinds(t, seen, "error")
	if message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || message.GetErrorMessage() == "" {
		t.Fatalf("message %v", message)
	}
}

func TestAServerKilledMidStreamGivesTheClientAnErrorEvent(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	s := startServer(t, "--delay", "0.3")
	events := newClient(t, s.target).Stream(ctx, userContext("hi"))
	if first, ok := events.Next(ctx); !ok || piproto.EventKind(first) != "start" {
		t.Fatal("no start event")
	}
	s.stop(syscall.SIGKILL)
	rest, message := drain(events)
	if piproto.EventKind(rest[len(rest)-1]) != "error" || message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || message.GetErrorMessage() == "" {
		t.Fatalf("kinds %v, message %v", kinds(rest), message)
	}
}

func TestAServerShuttingDownMidStreamEndsItWithAborted(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	s := startServer(t, "--delay", "0.3")
	events := newClient(t, s.target).Stream(ctx, userContext("hi"))
	if first, ok := events.Next(ctx); !ok || piproto.EventKind(first) != "start" {
		t.Fatal("no start event")
	}
	stopped := make(chan struct{})
	go func() { s.stop(syscall.SIGTERM); close(stopped) }()
	rest, message := drain(events)
	<-stopped
	if piproto.EventKind(rest[len(rest)-1]) != "error" {
		t.Fatalf("kinds %v", kinds(rest))
	}
	assertStopped(t, message, aiv1.StopReason_STOP_REASON_ABORTED, "the server is shutting down")
}

func TestATokenIsSentAndAWrongOneRefused(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--token-file", file)

	message := newClient(t, s.target, piproto.WithToken("s3cret")).Stream(ctx, userContext("hi")).Result(ctx)
	if message.StopReason != aiv1.StopReason_STOP_REASON_TOOL_USE {
		t.Fatalf("with the token: %v", message)
	}
	for _, client := range []*piproto.Client{newClient(t, s.target, piproto.WithToken("wrong")), newClient(t, s.target)} {
		seen, message := drain(client.Stream(ctx, userContext("hi")))
		assertKinds(t, seen, "error")
		assertStopped(t, message, aiv1.StopReason_STOP_REASON_ERROR, "missing or invalid bearer token")
	}
}

func TestTLSWithTheServersCertificate(t *testing.T) {
	bound(t)
	ctx := testContext(t)
	certificate, key := selfSigned(t, t.TempDir())
	s := startServer(t, "--tls-cert", certificate, "--tls-key", key)
	trusted, err := os.ReadFile(certificate)
	if err != nil {
		t.Fatal(err)
	}
	message := newClient(t, s.target, piproto.WithRootCertificates(trusted)).Stream(ctx, userContext("hi")).Result(ctx)
	if message.StopReason != aiv1.StopReason_STOP_REASON_TOOL_USE {
		t.Fatalf("over TLS: %v", message)
	}
	// Plaintext to a TLS server, and TLS without trusting its certificate, fail in-band.
	for _, client := range []*piproto.Client{newClient(t, s.target), newClient(t, s.target, piproto.WithTLS(&tls.Config{MinVersion: tls.VersionTLS12}))} {
		seen, message := drain(client.Stream(ctx, userContext("hi")))
		assertKinds(t, seen, "error")
		if message.StopReason != aiv1.StopReason_STOP_REASON_ERROR || message.GetErrorMessage() == "" {
			t.Fatalf("untrusted: %v", message)
		}
	}
	if _, err := piproto.NewClient(s.target, piproto.WithRootCertificates([]byte("not PEM"))); err == nil {
		t.Fatal("a bundle without certificates was accepted")
	}
}

// selfSigned writes a certificate for 127.0.0.1 and localhost, and its key, as PEM files.
func selfSigned(t *testing.T, directory string) (certificate, key string) {
	t.Helper()
	private, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pi-proto test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &private.PublicKey, private)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(private)
	if err != nil {
		t.Fatal(err)
	}
	certificate, key = filepath.Join(directory, "cert.pem"), filepath.Join(directory, "key.pem")
	for path, block := range map[string]*pem.Block{certificate: {Type: "CERTIFICATE", Bytes: der}, key: {Type: "PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certificate, key
}
