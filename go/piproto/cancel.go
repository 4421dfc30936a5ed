package piproto

import (
	"context"
	"time"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/grpc/metadata"
)

// CancelTimeout is how long a Cancel call may take, and how long [Client.Close] waits for the
// Cancel calls still on their way.
const CancelTimeout = time.Second

// cancelKept tells the server to cancel the stream it keeps as streamID, in the background, with
// the call's metadata (pairs): a server keeps a stream running for a while after its client has
// gone, and cannot tell a cancel from a connection lost. Best effort: its answer and errors are
// ignored, since a stream nobody reads is cancelled by its server soon anyway.
func (c *Client) cancelKept(streamID string, pairs []string) {
	sent := make(chan struct{})
	c.mu.Lock()
	if c.cancels == nil {
		c.cancels = make(map[chan struct{}]struct{})
	}
	c.cancels[sent] = struct{}{}
	c.mu.Unlock()
	go func() {
		defer func() {
			c.mu.Lock()
			delete(c.cancels, sent)
			c.mu.Unlock()
			close(sent)
		}()
		ctx, cancel := context.WithTimeout(context.Background(), CancelTimeout)
		defer cancel()
		if len(pairs) > 0 {
			ctx = metadata.AppendToOutgoingContext(ctx, pairs...)
		}
		_, _ = aiv1.NewModelServiceClient(c.conn).Cancel(ctx, &aiv1.CancelRequest{StreamId: streamID})
	}()
}

// awaitCancels waits, at most CancelTimeout, for the Cancel calls on their way.
func (c *Client) awaitCancels() {
	c.mu.Lock()
	pending := make([]chan struct{}, 0, len(c.cancels))
	for sent := range c.cancels {
		pending = append(pending, sent)
	}
	c.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	timer := time.NewTimer(CancelTimeout)
	defer timer.Stop()
	for _, sent := range pending {
		select {
		case <-sent:
		case <-timer.C:
			return
		}
	}
}
