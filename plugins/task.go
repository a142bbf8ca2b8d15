package plugins

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// What a sink and a source task stream share is here: the start handshake's
// checks and the bounded Stop. The runners themselves stay apart on
// purpose: a sink runner answers the host's requests in order on one loop
// (put batches under credits, reassembled from parts), a source runner
// polls on its own goroutine and pushes batches while another takes the
// host's credits and commits; their state, metrics and shutdown differ
// accordingly.

// taskStopTimeout bounds a task's Stop when its stream ends.
const taskStopTimeout = 30 * time.Second

// recvStart receives the first message of a task stream, which must be the
// task's start. kind is "sink" or "source".
func recvStart[T any, Req interface{ GetStart() *T }](recv func() (Req, error), kind string) (*T, error) {
	first, err := recv()
	if err != nil {
		return nil, err
	}
	start := first.GetStart()
	if start == nil {
		return nil, status.Errorf(codes.InvalidArgument, "the first message of a %s task stream must be start", kind)
	}
	return start, nil
}

// connectorAs returns a fresh instance of the served connector as the kind
// of connector a task stream needs (sdk.SinkConnector or
// sdk.SourceConnector): a task may run where its connector instance does
// not, so it gets none of an instance's state.
func connectorAs[C any](s *server, kind string) (C, error) {
	c, ok := s.newConn().(C)
	if !ok {
		return c, status.Errorf(codes.FailedPrecondition, "%s is not a %s connector", s.spec.Class, kind)
	}
	return c, nil
}

// stopTask runs a task's Stop within taskStopTimeout.
func stopTask(t interface{ Stop(context.Context) error }) error {
	ctx, cancel := context.WithTimeout(context.Background(), taskStopTimeout)
	defer cancel()
	return t.Stop(ctx)
}
