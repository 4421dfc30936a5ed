package piproto

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Client is a client of pi.ai.v1.ModelService: every call of Stream shares its one connection.
type Client struct {
	conn          *grpc.ClientConn
	authorization string
}

type clientConfig struct {
	token       string
	tls         *tls.Config
	roots       []byte
	dialOptions []grpc.DialOption
	maxReceive  int
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

// WithMaxReceiveBytes sets the largest event the client accepts (default 64 MiB, as in Python).
func WithMaxReceiveBytes(n int) ClientOption {
	return func(config *clientConfig) { config.maxReceive = n }
}

// WithDialOptions passes further options to grpc.NewClient; they come after the client's own,
// so they may replace its transport credentials (for example with a dialer of your own).
func WithDialOptions(options ...grpc.DialOption) ClientOption {
	return func(config *clientConfig) { config.dialOptions = append(config.dialOptions, options...) }
}

// NewClient returns a client of the ModelService at target (host:port, or any gRPC target
// name). It connects when the first call needs it and reconnects as needed; without TLS options
// it speaks plaintext HTTP/2. It fails only for a target or options it cannot use.
func NewClient(target string, options ...ClientOption) (*Client, error) {
	config := clientConfig{maxReceive: 64 * 1024 * 1024}
	for _, option := range options {
		option(&config)
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
	client := &Client{conn: conn}
	if config.token != "" {
		client.authorization = "Bearer " + config.token
	}
	return client, nil
}

// Close closes the connection; streams still open end with an ERROR event.
func (c *Client) Close() error {
	return c.conn.Close()
}

// Target is the target the client was created with.
func (c *Client) Target() string {
	return c.conn.Target()
}

type streamConfig struct {
	model      string
	generation *aiv1.GenerationOptions
	metadata   []string
}

// StreamOption configures one call of [Client.Stream].
type StreamOption func(*streamConfig)

// WithModel names the model to call; without it, the server's default model answers.
func WithModel(id string) StreamOption {
	return func(config *streamConfig) { config.model = id }
}

// WithGeneration sets the call's generation options; without it, the model's defaults apply.
func WithGeneration(options *aiv1.GenerationOptions) StreamOption {
	return func(config *streamConfig) { config.generation = options }
}

// WithMetadata sends request metadata with the call, as key, value pairs.
func WithMetadata(keyValues ...string) StreamOption {
	return func(config *streamConfig) { config.metadata = append(config.metadata, keyValues...) }
}

// Stream starts one call of pi.ai.v1.ModelService.Stream with agentContext; the events arrive
// with their Partial rebuilt.
//
// Every failure becomes the stream's error event, carrying everything received before it: a
// non-OK status or transport failure is ERROR with the status message (or, without one, the
// status code's name, e.g. RESOURCE_EXHAUSTED); a stream that closes without a terminal event is
// ERROR "stream ended without a terminal event"; an event that cannot be decoded, or that breaks
// an event-sequence rule, is ERROR naming the event's index (and the rule). Cancelling ctx, or
// calling Cancel on the stream, ends it with ABORTED "cancelled"; a deadline of ctx that passes
// ends it with ERROR "context deadline exceeded".
func (c *Client) Stream(ctx context.Context, agentContext *aiv1.AgentContext, options ...StreamOption) *AssistantMessageEventStream {
	var config streamConfig
	for _, option := range options {
		option(&config)
	}
	events := NewAssistantMessageEventStream()
	request, err := proto.Marshal(&aiv1.StreamRequest{Model: config.model, Context: agentContext, Options: config.generation})
	if err != nil {
		events.Fail(aiv1.StopReason_STOP_REASON_ERROR, "invalid request: "+err.Error())
		return events
	}
	pairs := config.metadata
	if c.authorization != "" {
		pairs = append([]string{"authorization", c.authorization}, pairs...)
	}
	events.Drive(ctx, func(ctx context.Context) error {
		if len(pairs) > 0 {
			ctx = metadata.AppendToOutgoingContext(ctx, pairs...)
		}
		c.receive(ctx, events, request)
		return nil
	})
	return events
}

// receive runs one call and sends its events to events, which ends it on any failure.
func (c *Client) receive(ctx context.Context, events *AssistantMessageEventStream, request []byte) {
	fail := func(message string) { events.Fail(aiv1.StopReason_STOP_REASON_ERROR, message) }
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	method := &aiv1.ModelService_ServiceDesc.Streams[0]
	call, err := c.conn.NewStream(ctx, method, aiv1.ModelService_Stream_FullMethodName, grpc.ForceCodecV2(frameCodec{}))
	if err == nil {
		err = call.SendMsg(request)
	}
	if err == nil {
		err = call.CloseSend()
	}
	received := 0
	for err == nil {
		var frame []byte
		if err = call.RecvMsg(&frame); err != nil {
			break
		}
		received++
		event := &aiv1.ModelEvent{}
		if decodeErr := proto.Unmarshal(frame, event); decodeErr != nil {
			fail(fmt.Sprintf("event %d: cannot decode ModelEvent: %s", received-1, decodeError(decodeErr)))
			return
		}
		if sendErr := events.Send(ctx, event); sendErr != nil {
			var broken *StreamProtocolError
			if errors.As(sendErr, &broken) {
				fail(broken.Error())
			}
			return // otherwise ctx has ended: the stream has ended with it
		}
		if events.Done() {
			// Anything after the terminal event is ignored; the trailers follow at once.
			timer := time.AfterFunc(time.Second, cancel)
			for call.RecvMsg(&frame) == nil {
			}
			timer.Stop()
			return
		}
	}
	if errors.Is(err, io.EOF) || ctx.Err() != nil {
		return // a stream without a terminal event, or one the caller has ended
	}
	fail(statusMessage(err))
}

// decodeError is the text of a protobuf decoding error without its "proto:" prefix, after which
// protobuf-go puts a space or, at random, a no-break space, to keep programs from matching it.
func decodeError(err error) string {
	return strings.TrimLeft(strings.TrimPrefix(err.Error(), "proto:"), " \u00a0")
}

// statusMessage is what the error event of a failed call says: the status message, or the
// status code's name when the status has none.
func statusMessage(err error) string {
	found, ok := status.FromError(err)
	if !ok {
		return err.Error()
	}
	if found.Message() != "" {
		return found.Message()
	}
	return codeName(found.Code().String())
}

// codeName is a gRPC code's name as other gRPC libraries print it: DeadlineExceeded is
// DEADLINE_EXCEEDED.
func codeName(name string) string {
	var out strings.Builder
	for i, char := range name {
		if i > 0 && unicode.IsUpper(char) && unicode.IsLower(rune(name[i-1])) {
			out.WriteByte('_')
		}
		out.WriteRune(unicode.ToUpper(char))
	}
	return out.String()
}

// frameCodec sends requests encoded in advance and receives events as their bytes, so a frame
// that does not decode is told apart from a status the server sent.
type frameCodec struct{}

func (frameCodec) Name() string { return "proto" }

func (frameCodec) Marshal(v any) (mem.BufferSlice, error) {
	data, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("piproto: cannot send %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(data)}, nil
}

func (frameCodec) Unmarshal(data mem.BufferSlice, v any) error {
	frame, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("piproto: cannot receive into %T", v)
	}
	*frame = data.Materialize()
	return nil
}
