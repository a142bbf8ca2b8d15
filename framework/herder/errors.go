package herder

import "time"

// Errors the herder returns; framework/rest maps them to status codes.

// NotFoundError: an unknown connector, task or plugin (404).
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// AlreadyExistsError: creating a connector whose name is taken (409).
type AlreadyExistsError struct{ Msg string }

func (e *AlreadyExistsError) Error() string { return e.Msg }

// BadRequestError: invalid input, the message names the field (400).
type BadRequestError struct{ Msg string }

func (e *BadRequestError) Error() string { return e.Msg }

// RebalanceError: the request cannot be served while the cluster
// rebalances; the client should retry after RetryAfter (409 with
// Retry-After, and a message that says it is a rebalance).
type RebalanceError struct {
	Msg        string
	RetryAfter time.Duration
}

func (e *RebalanceError) Error() string { return e.Msg }

// NotLeaderError: the request must run on the leader; LeaderURL is where to
// forward it ("" when no leader is known, which is a RebalanceError for the
// client).
type NotLeaderError struct{ LeaderURL string }

func (e *NotLeaderError) Error() string {
	if e.LeaderURL == "" {
		return "this worker is not the leader and no leader is known"
	}
	return "this worker is not the leader; the leader is " + e.LeaderURL
}

// ForbiddenError: the operation is disabled by configuration (403).
type ForbiddenError struct{ Msg string }

func (e *ForbiddenError) Error() string { return e.Msg }
