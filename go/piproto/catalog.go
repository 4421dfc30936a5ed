package piproto

import (
	"context"
	"time"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// DefaultCatalogTimeout is the deadline of a ListModels or GetModel call whose context has none.
const DefaultCatalogTimeout = 30 * time.Second

// CallError is a ListModels or GetModel call that ended with a status other than OK.
type CallError struct {
	// Method is the RPC: "ListModels" or "GetModel".
	Method string
	// StatusCode is the name of the gRPC status code, e.g. "NOT_FOUND" or "UNAVAILABLE".
	StatusCode string
	// Detail is the status message (the code's name when the server sent none).
	Detail string

	status *status.Status
}

func (e *CallError) Error() string {
	return "piproto: " + e.Method + ": " + e.StatusCode + ": " + e.Detail
}

// GRPCStatus is the status the call ended with, so that status.FromError and status.Code read it.
func (e *CallError) GRPCStatus() *status.Status { return e.status }

// ListModels lists the models the server serves, in its catalog order: only provider's, unless
// provider is "". A failed call returns a *[CallError].
func (c *Client) ListModels(ctx context.Context, provider string) ([]*aiv1.Model, error) {
	if c.isClosed() {
		return nil, closedError("ListModels")
	}
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	reply, err := aiv1.NewModelServiceClient(c.conn).ListModels(ctx, &aiv1.ListModelsRequest{Provider: provider})
	if err != nil {
		return nil, callError("ListModels", err)
	}
	return reply.GetModels(), nil
}

// GetModel is one model of the server's catalog, named by its id and provider ("" for the only
// provider that serves the id). A model the server does not serve is a *[CallError] with the
// status code "NOT_FOUND", whose Detail names what is served.
func (c *Client) GetModel(ctx context.Context, id, provider string) (*aiv1.Model, error) {
	if c.isClosed() {
		return nil, closedError("GetModel")
	}
	ctx, cancel := c.unaryContext(ctx)
	defer cancel()
	reply, err := aiv1.NewModelServiceClient(c.conn).GetModel(ctx, &aiv1.GetModelRequest{Provider: provider, Id: id})
	if err != nil {
		return nil, callError("GetModel", err)
	}
	if reply.GetModel() == nil {
		detail := "the server answered without a model"
		return nil, &CallError{Method: "GetModel", StatusCode: "INTERNAL", Detail: detail, status: status.New(codes.Internal, detail)}
	}
	return reply.GetModel(), nil
}

// unaryContext is ctx with the client's token and, when ctx has no deadline, DefaultCatalogTimeout.
func (c *Client) unaryContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.authorization != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", c.authorization)
	}
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, DefaultCatalogTimeout)
}

// closedError is the CallError of a catalog call made after Close.
func closedError(method string) *CallError {
	return &CallError{Method: method, StatusCode: "CANCELED", Detail: clientClosed, status: status.New(codes.Canceled, clientClosed)}
}

func callError(method string, err error) *CallError {
	found, ok := status.FromError(err)
	if !ok {
		found = status.FromContextError(err)
	}
	detail := found.Message()
	if detail == "" {
		detail = codeName(found.Code())
	}
	return &CallError{Method: method, StatusCode: codeName(found.Code()), Detail: detail, status: found}
}
