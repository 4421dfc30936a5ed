package piproto

import (
	"context"
	"errors"
	"io"
	"time"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// A call cut off after its stream id arrived is resumed (ModelService.Resume) up to MaxResumes
// times in a row without an event applied between them, each after a wait of ResumeBackoff,
// doubled at every attempt, and never past the call's deadline.
const (
	MaxResumes    = 5
	ResumeBackoff = 50 * time.Millisecond
)

// resumption counts the Resume calls that one call has made in a row.
type resumption struct {
	attempts int
}

// applied notes an event applied: the attempts count from 0 again.
func (r *resumption) applied() { r.attempts = 0 }

// resumable reports whether err cut off a call that may go on elsewhere: UNAVAILABLE, a
// connection lost rather than a call refused, or an OK status before any terminal event.
func resumable(err error) bool {
	return errors.Is(err, io.EOF) || status.Code(err) == codes.Unavailable
}

// wait waits before the next Resume of the stream streamID, and reports whether to make it:
// false when there is no stream id, the attempts are used up, the wait would reach the call's
// deadline, or the call ends while waiting.
func (r *resumption) wait(call context.Context, streamID string) bool {
	if streamID == "" || r.attempts >= MaxResumes {
		return false
	}
	wait := ResumeBackoff << r.attempts
	if deadline, ok := call.Deadline(); ok && !time.Now().Add(wait).Before(deadline) {
		return false
	}
	r.attempts++
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-call.Done():
		return false
	}
}

// resume starts the Resume call that goes on with the stream streamID after the event numbered
// afterSeq, within what is left of call's deadline. Resume sends single events, even where the
// first call was StreamBatched.
func (c *Client) resume(call context.Context, streamID string, afterSeq uint64, coalesce bool) (*eventSource, error) {
	request, err := proto.Marshal(&aiv1.ResumeRequest{StreamId: streamID, AfterSeq: afterSeq, CoalesceDeltas: coalesce})
	if err != nil {
		return nil, err
	}
	return c.openStream(call, &aiv1.ModelService_ServiceDesc.Streams[2], aiv1.ModelService_Resume_FullMethodName, request, false)
}
