package piproto

import (
	"context"
	"fmt"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// open starts a call of StreamBatched (batched) or Stream and sends it the request.
func (c *Client) open(call context.Context, request []byte, batched bool) (*eventSource, error) {
	method, name := &aiv1.ModelService_ServiceDesc.Streams[0], aiv1.ModelService_Stream_FullMethodName
	if batched {
		method, name = &aiv1.ModelService_ServiceDesc.Streams[1], aiv1.ModelService_StreamBatched_FullMethodName
	}
	return c.openStream(call, method, name, request, batched)
}

// openStream starts a call of a server-streaming method and sends it the request, encoded in
// advance; batched says its messages are StreamBatchedResponses.
func (c *Client) openStream(call context.Context, method *grpc.StreamDesc, name string, request []byte, batched bool) (*eventSource, error) {
	codec := &frameCodec{}
	stream, err := c.conn.NewStream(call, method, name, grpc.ForceCodecV2(codec))
	if err == nil {
		err = stream.SendMsg(request)
	}
	if err == nil {
		err = stream.CloseSend()
	}
	return &eventSource{stream: stream, codec: codec, batched: batched}, err
}

// eventSource gives the bytes of a call's events one at a time: each message of Stream, or each
// event of StreamBatched's messages, received as StreamBatchedView so that every event stays
// bytes until it is wanted, and the events in front of a malformed one are still delivered.
type eventSource struct {
	stream  grpc.ClientStream
	codec   *frameCodec
	batched bool
	pending [][]byte // the events of the batch at hand not yet taken
}

// batchError is a StreamBatched message that does not decode as a StreamBatchedView.
type batchError struct{ detail string }

func (e *batchError) Error() string { return e.detail }

// next is the bytes of the next event; the call's error (io.EOF after an OK status), or a
// *batchError for a batch that does not decode.
func (s *eventSource) next() ([]byte, error) {
	if !s.batched {
		var message []byte
		err := s.stream.RecvMsg(&message)
		return message, err
	}
	for len(s.pending) == 0 { // a batch without events holds nothing to deliver
		view := &aiv1.StreamBatchedView{}
		if err := s.stream.RecvMsg(view); err != nil {
			if s.codec.failed != nil {
				return nil, &batchError{decodeError(s.codec.failed)}
			}
			return nil, err
		}
		s.pending = view.GetEvents()
	}
	event := s.pending[0]
	s.pending[0] = nil // the batch's slice no longer keeps it alive
	s.pending = s.pending[1:]
	return event, nil
}

// drain reads what the call sends after its terminal event, without decoding it, until the
// status.
func (s *eventSource) drain() {
	var frame []byte
	for s.stream.RecvMsg(&frame) == nil {
	}
}

// frameCodec sends requests encoded in advance (with map entries in key order) and receives an
// event as its bytes or a batch as a StreamBatchedView. It keeps the error of a message that did
// not decode: grpc-go turns it into an INTERNAL status, which a server could send as well.
type frameCodec struct {
	failed error
}

func (*frameCodec) Name() string { return "proto" }

func (*frameCodec) Marshal(v any) (mem.BufferSlice, error) {
	data, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("piproto: cannot send %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(data)}, nil
}

func (c *frameCodec) Unmarshal(data mem.BufferSlice, v any) error {
	switch target := v.(type) {
	case *[]byte:
		*target = data.Materialize()
		return nil
	case proto.Message:
		// Unmarshal copies every bytes field, so the pooled buffer can go back at once.
		buffer := data.MaterializeToBuffer(mem.DefaultBufferPool())
		defer buffer.Free()
		if err := proto.Unmarshal(buffer.ReadOnlyData(), target); err != nil {
			c.failed = err
			return err
		}
		return nil
	}
	return fmt.Errorf("piproto: cannot receive into %T", v)
}
