package piproto

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// DefaultTimeout is the deadline of a call that sets none: 15 minutes, longer than a server's
// usual limit on one stream, so that a server that never answers cannot hold a call forever.
const DefaultTimeout = 15 * time.Minute

// clientClosed is the error message of a stream that [Client.Close] ended, or that was started
// after it.
const clientClosed = "the client was closed"

// Client is a client of pi.ai.v1.ModelService: every call of Stream shares its one connection.
type Client struct {
	conn            *grpc.ClientConn
	authorization   string
	defaultTimeout  time.Duration
	maxMessageBytes int64
	batched         bool

	mu      sync.Mutex
	closed  bool
	streams map[*AssistantMessageEventStream]struct{} // the streams whose calls are running
	cancels map[chan struct{}]struct{}                // the Cancel calls on their way, closed when done
}

type clientConfig struct {
	token           string
	tls             *tls.Config
	roots           []byte
	dialOptions     []grpc.DialOption
	maxReceive      int
	defaultTimeout  time.Duration
	maxMessageBytes int64
	unbatched       bool
}

// ClientOption configures [NewClient].
type ClientOption func(*clientConfig)

// WithToken sends "authorization: Bearer <token>" with every call.
func WithToken(token string) ClientOption {
	return func(config *clientConfig) { config.token = token }
}

// WithRootCertificates connects with TLS, trusting the certificates of this PEM bundle (as
// `pi-proto stream --ca-file` does).
func WithRootCertificates(pem []byte) ClientOption {
	return func(config *clientConfig) { config.roots = pem }
}

// WithTLS connects with TLS under this configuration.
func WithTLS(config *tls.Config) ClientOption {
	return func(c *clientConfig) { c.tls = config }
}

// WithMaxReceiveBytes sets the largest event, in bytes on the wire, the client accepts (default
// 64 MiB); it must be at least 1.
func WithMaxReceiveBytes(n int) ClientOption {
	return func(config *clientConfig) { config.maxReceive = n }
}

// WithDefaultTimeout sets the deadline of a call that sets none with [WithTimeout] (default
// [DefaultTimeout], 15 minutes); 0 leaves such calls without a deadline of their own. It must
// not be negative.
func WithDefaultTimeout(timeout time.Duration) ClientOption {
	return func(config *clientConfig) { config.defaultTimeout = timeout }
}

// WithMaxMessageBytes caps the UTF-8 bytes a call's block events (deltas, tool-call ids and
// names, signatures) may add up to (default [DefaultMaxMessageBytes], 64 MiB, which 0 also means); a call
// that sends more ends with an ERROR event and the rule "size-limit". It must not be negative.
func WithMaxMessageBytes(n int64) ClientOption {
	return func(config *clientConfig) { config.maxMessageBytes = n }
}

// WithBatched chooses the RPC that [Client.Stream] calls. With true (the default) it calls
// ModelService.StreamBatched, which carries the events that are ready together in one message,
// and falls back to ModelService.Stream, within the same deadline, when the server answers
// UNIMPLEMENTED before any event (a server without StreamBatched). With false it calls Stream
// alone. The events a stream yields are the same either way.
func WithBatched(batched bool) ClientOption {
	return func(config *clientConfig) { config.unbatched = !batched }
}

// WithDialOptions passes further options to grpc.NewClient; they come after the client's own,
// so they may replace its transport credentials (for example with a dialer of your own).
func WithDialOptions(options ...grpc.DialOption) ClientOption {
	return func(config *clientConfig) { config.dialOptions = append(config.dialOptions, options...) }
}

// NewClient returns a client of the ModelService at target (host:port, or any gRPC target
// name). It connects when the first call needs it and reconnects as needed; without TLS options
// it speaks plaintext HTTP/2. It fails only for a target or options it cannot use: an empty
// target, a token that cannot go in a header, a negative timeout or limit, a receive limit of 0.
func NewClient(target string, options ...ClientOption) (*Client, error) {
	config := clientConfig{maxReceive: 64 << 20, defaultTimeout: DefaultTimeout, maxMessageBytes: DefaultMaxMessageBytes}
	for _, option := range options {
		option(&config)
	}
	if err := config.check(target); err != nil {
		return nil, err
	}
	transport := insecure.NewCredentials()
	if config.roots != nil || config.tls != nil {
		tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
		if config.tls != nil {
			tlsConfig = config.tls.Clone()
		}
		if config.roots != nil {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(config.roots) {
				return nil, errors.New("piproto: the root certificates hold no PEM certificate")
			}
			tlsConfig.RootCAs = pool
		}
		transport = credentials.NewTLS(tlsConfig)
	}
	dialOptions := append([]grpc.DialOption{
		grpc.WithTransportCredentials(transport),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(config.maxReceive)),
	}, config.dialOptions...)
	conn, err := grpc.NewClient(target, dialOptions...)
	if err != nil {
		return nil, fmt.Errorf("piproto: %w", err)
	}
	client := &Client{
		conn: conn, defaultTimeout: config.defaultTimeout, maxMessageBytes: config.maxMessageBytes, batched: !config.unbatched,
	}
	if config.token != "" {
		client.authorization = "Bearer " + config.token
	}
	return client, nil
}

// check refuses a target or options the client cannot use, before anything is dialled.
func (config *clientConfig) check(target string) error {
	switch {
	case strings.TrimSpace(target) == "":
		return errors.New("piproto: the target is empty")
	case strings.ContainsFunc(config.token, func(char rune) bool { return char < 0x20 || char > 0x7e }):
		// grpc-go refuses such a header value on every call; better to say so once, here.
		return errors.New("piproto: the token holds a character other than printable ASCII, which a header cannot carry")
	case config.defaultTimeout < 0:
		return fmt.Errorf("piproto: the default timeout is negative (%v); 0 means none", config.defaultTimeout)
	case config.maxReceive <= 0:
		return fmt.Errorf("piproto: the largest message to receive must be at least 1 byte, not %d", config.maxReceive)
	case config.maxMessageBytes < 0:
		return fmt.Errorf("piproto: the most bytes a message's deltas may add up to is negative (%d)", config.maxMessageBytes)
	}
	return nil
}

// Close closes the connection. Streams still open end with an ABORTED error event, "the client
// was closed", with no Failure (the caller ended them; nothing failed), and streams started from
// then on end with it at once; catalog calls fail with CANCELED. The server is told to cancel
// each of those streams it keeps (ModelService.Cancel), and Close waits up to [CancelTimeout]
// for those calls before it closes the connection.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	open := c.streams
	c.streams = nil
	c.mu.Unlock()
	// Ended before the connection goes, so that their consumers see the close, not the error of a
	// connection closing under them.
	for events := range open {
		events.CancelWith(clientClosed, aiv1.StopReason_STOP_REASON_ABORTED)
	}
	c.awaitCancels() // the servers' streams are told before the connection goes
	return c.conn.Close()
}

// isClosed reports whether Close has been called.
func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Target is the target the client was created with.
func (c *Client) Target() string {
	return c.conn.Target()
}

type streamConfig struct {
	provider   string
	model      string
	generation *aiv1.GenerationOptions
	coalesce   bool
	timeout    *time.Duration
	metadata   []string
}

// StreamOption configures one call of [Client.Stream].
type StreamOption func(*streamConfig)

// WithModel names the model to call by its id, as its provider names it; without it, the
// server's default model answers. With two providers serving the same id, add [WithProvider].
func WithModel(id string) StreamOption {
	return func(config *streamConfig) { config.model = id }
}

// WithProvider names the provider serving the model, as pi names a model by provider and id;
// without it, the only provider that serves the id answers.
func WithProvider(provider string) StreamOption {
	return func(config *streamConfig) { config.provider = provider }
}

// WithModelOf names a model of the catalog ([Client.ListModels], [Client.GetModel]) by its
// provider and id.
func WithModelOf(model *aiv1.Model) StreamOption {
	return func(config *streamConfig) { config.provider, config.model = model.GetProvider(), model.GetId() }
}

// WithGeneration sets the call's generation options; without it, the model's defaults apply.
func WithGeneration(options *aiv1.GenerationOptions) StreamOption {
	return func(config *streamConfig) { config.generation = options }
}

// WithCoalesceDeltas lets the server merge deltas that wait while this client reads slower than
// the model writes (StreamRequest.coalesce_deltas).
func WithCoalesceDeltas(coalesce bool) StreamOption {
	return func(config *streamConfig) { config.coalesce = coalesce }
}

// WithTimeout sets the call's deadline, counted from its start, in place of the client's default
// timeout; 0 means none, and a negative one has passed already (as with context.WithTimeout). A
// deadline of the call's context applies as well, whichever comes first.
func WithTimeout(timeout time.Duration) StreamOption {
	return func(config *streamConfig) { config.timeout = &timeout }
}

// WithMetadata sends request metadata with the call, as key, value pairs; an odd number of
// strings ends the stream with ERROR (INVALID_ARGUMENT) before anything is sent.
func WithMetadata(keyValues ...string) StreamOption {
	return func(config *streamConfig) { config.metadata = append(config.metadata, keyValues...) }
}

// Stream starts one model call with agentContext; the events arrive with their Partial rebuilt.
// It calls ModelService.StreamBatched, and ModelService.Stream on a server that answers that with
// UNIMPLEMENTED, or always with [WithBatched](false). The events of a batch are taken one at a
// time, exactly as if each had come in a message of its own: each has its own Partial, and every
// event index counts events. The call is read as its events are consumed (or waited for by
// Result), so a consumer that falls behind slows the server down through flow control.
//
// Every failure becomes the stream's error event, carrying everything received before it, and
// [AssistantMessageEventStream.Failure] says which: a non-OK status or transport failure is ERROR
// with the status message (Failure: its code); a passed deadline is ERROR (DEADLINE_EXCEEDED); a
// stream that closes without a terminal event is ERROR "stream ended without a terminal event"
// (rule "terminal-missing"); bytes that are no ModelEvent, or an event that breaks a stream rule,
// are ERROR naming the event's index and the rule. Cancelling ctx, or calling Cancel on the
// stream, ends it with ABORTED "cancelled" and no Failure; closing the client ends it with ABORTED
// "the client was closed" and no Failure, at once for a stream started after [Client.Close].
//
// The events of a numbered stream (ModelEvent.seq) are checked by a [Numbering]: a repeat is
// dropped, a gap ends the stream with rule "sequence". A call cut off after its start event gave
// a stream id, by UNAVAILABLE or by an end without a terminal event, resumes by itself: after
// [ResumeBackoff], doubled at each attempt, it calls ModelService.Resume after the last event
// applied, within the call's deadline, and goes on with its events as one stream, up to
// [MaxResumes] attempts in a row without an event between them; when it cannot, the stream ends
// as it would have without them. A stream with a stream id that the caller cancels (Cancel,
// ctx, [Client.Close]) is cancelled on the server too, by a ModelService.Cancel call that is not
// waited for.
func (c *Client) Stream(ctx context.Context, agentContext *aiv1.AgentContext, options ...StreamOption) *AssistantMessageEventStream {
	config := streamConfig{timeout: &c.defaultTimeout}
	for _, option := range options {
		option(&config)
	}
	events := NewAssistantMessageEventStreamWithLimit(c.maxMessageBytes)
	request, err := (proto.MarshalOptions{Deterministic: true}).Marshal(&aiv1.StreamRequest{ // map entries in key order
		Provider: config.provider, Model: config.model, Context: agentContext, Options: config.generation,
		CoalesceDeltas: config.coalesce, Resumable: true, // every client here resumes a stream cut off
	})
	if err != nil {
		events.failStatus("INVALID_ARGUMENT", "invalid request: "+err.Error())
		return events
	}
	if len(config.metadata)%2 != 0 {
		// grpc's AppendToOutgoingContext would panic, in the goroutine of the call.
		events.failStatus("INVALID_ARGUMENT", fmt.Sprintf("invalid request: WithMetadata takes key, value pairs, not %d strings", len(config.metadata)))
		return events
	}
	pairs := config.metadata
	if c.authorization != "" {
		pairs = append([]string{"authorization", c.authorization}, pairs...)
	}
	timeout := *config.timeout
	events.cancelled = func(streamID string) { c.cancelKept(streamID, pairs) } // set before anyone can cancel
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		events.CancelWith(clientClosed, aiv1.StopReason_STOP_REASON_ABORTED)
		return events
	}
	if c.streams == nil {
		c.streams = make(map[*AssistantMessageEventStream]struct{})
	}
	c.streams[events] = struct{}{}
	c.mu.Unlock()
	events.Drive(ctx, func(ctx context.Context) error {
		defer c.forget(events)
		if len(pairs) > 0 {
			ctx = metadata.AppendToOutgoingContext(ctx, pairs...)
		}
		return c.receive(ctx, events, request, timeout, config.coalesce)
	})
	return events
}

// forget drops a stream whose call has ended from the ones Close ends.
func (c *Client) forget(events *AssistantMessageEventStream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, events)
}

// receive runs one call and feeds its events to events, reading the next event only once it is
// wanted, and resumes the call when it is cut off. It ends the stream itself on a status, an
// undecodable event or a broken rule; it returns nil when the call ended without a terminal
// event, which Drive turns into one.
func (c *Client) receive(ctx context.Context, events *AssistantMessageEventStream, request []byte, timeout time.Duration, coalesce bool) error {
	var call context.Context
	var cancel context.CancelFunc
	if timeout != 0 {
		call, cancel = context.WithTimeout(ctx, timeout) // a negative timeout has passed already
	} else {
		call, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	// A server without StreamBatched answers UNIMPLEMENTED before any event: then the same
	// request goes to Stream, within the same deadline.
	unimplemented := func(source *eventSource, err error) bool {
		return source.batched && status.Code(err) == codes.Unimplemented
	}
	source, err := c.open(call, request, c.batched)
	if unimplemented(source, err) {
		source, err = c.open(call, request, false)
	}
	numbering := NewNumbering(coalesce)
	var resumes resumption
	applied := 0 // the events applied: the index of the next one
	for {
		if err == nil {
			err = events.events.awaitDemand(call)
		}
		var frame []byte
		if err == nil {
			frame, err = source.next()
			if applied == 0 && unimplemented(source, err) {
				if source, err = c.open(call, request, false); err == nil {
					frame, err = source.next()
				}
			}
		}
		var malformed *batchError
		if errors.As(err, &malformed) {
			events.failRule(newStreamProtocolError(applied, aiv1.StreamRule_STREAM_RULE_EVENT_DECODE, "cannot decode the batch: "+malformed.detail))
			return nil
		}
		if err != nil {
			if call.Err() == nil && resumable(err) && resumes.wait(call, events.StreamID()) {
				source, err = c.resume(call, events.StreamID(), numbering.Last(), coalesce)
				continue
			}
			break
		}
		event := &aiv1.ModelEvent{}
		if decodeErr := proto.Unmarshal(frame, event); decodeErr != nil {
			events.failRule(newStreamProtocolError(applied, aiv1.StreamRule_STREAM_RULE_EVENT_DECODE, "not a ModelEvent: "+decodeError(decodeErr)))
			return nil
		}
		admitted, admitErr := numbering.Admit(event, applied)
		if admitErr != nil {
			return admitErr // a *StreamProtocolError, which Drive makes the stream's failure
		}
		if !admitted {
			continue // a repeat, which a resumed server may send: dropped uncounted
		}
		applied++
		resumes.applied()
		if pushErr := events.Push(event); pushErr != nil {
			return pushErr // a *StreamProtocolError, which Drive makes the stream's failure
		}
		if events.Done() {
			// Anything after the terminal event is ignored; the status follows at once.
			timer := time.AfterFunc(time.Second, cancel)
			source.drain()
			timer.Stop()
			return nil
		}
	}
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil // a call without a terminal event, or one the caller has ended
	}
	found, ok := status.FromError(err)
	if !ok {
		found = status.FromContextError(err) // the deadline passed while no event was wanted
	}
	message := found.Message()
	if message == "" {
		message = codeName(found.Code())
	}
	events.failStatus(codeName(found.Code()), message)
	return nil
}

// decodeError is the text of a protobuf decoding error without its "proto:" prefix, after which
// protobuf-go puts a space or, at random, a no-break space, to keep programs from matching it.
func decodeError(err error) string {
	return strings.TrimLeft(strings.TrimPrefix(err.Error(), "proto:"), " \u00a0")
}

// codeName is a gRPC code's canonical name, as in the gRPC specification: DEADLINE_EXCEEDED.
func codeName(code codes.Code) string {
	name := code.String() // DeadlineExceeded
	var out strings.Builder
	for i, char := range name {
		if i > 0 && unicode.IsUpper(char) && unicode.IsLower(rune(name[i-1])) {
			out.WriteByte('_')
		}
		out.WriteRune(unicode.ToUpper(char))
	}
	return out.String()
}
