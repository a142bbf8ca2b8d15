package herder

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder/assignment"
	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
)

// healthBound bounds a whole health check, so that /health answers within
// the REST layer's 10 s and a probe's timeout even when Kafka does not
// answer (some client calls are bounded only by their own timeouts; the
// check then finishes in the background and its answer is dropped).
const healthBound = 8 * time.Second

// Health is GET /health. It answers healthy only when this worker can serve
// every REST request now: it has started, knows the leader (and, on another
// worker than the leader, has the session key that signs forwarded
// requests), its assignment loop answers, and it has read the config and
// status topics to their ends. Anything else is "starting" until the worker
// has been ready once, "unhealthy" afterwards, with the reason in Message.
func (h *Herder) Health(ctx context.Context) api.Health {
	if h.stopping.Load() {
		return api.Health{Status: api.HealthUnhealthy, Message: "Worker is shutting down."}
	}
	if !h.started.Load() {
		return api.Health{Status: api.HealthStarting, Message: "Worker is still starting up. Current stage: " + *h.stage.Load() + "."}
	}
	ctx, cancel := context.WithTimeout(ctx, healthBound)
	defer cancel()
	done := make(chan api.Health, 1)
	go func() { done <- h.checkReady(ctx) }()
	select {
	case hl := <-done:
		return hl
	case <-ctx.Done():
		return h.notReady(fmt.Sprintf("the readiness checks did not finish within %v (is Kafka reachable?)", healthBound))
	}
}

func (h *Herder) notReady(why string) api.Health {
	st := api.HealthUnhealthy
	if !h.readyOnce.Load() {
		st = api.HealthStarting
	}
	return api.Health{Status: st, Message: "Worker cannot serve every request yet: " + why + "."}
}

func (h *Herder) checkReady(ctx context.Context) api.Health {
	// The same check a leader-only write makes: from a healthy answer on,
	// a create either runs here or is forwarded to a known leader.
	var nl *NotLeaderError
	switch err := h.leaderOnly(); {
	case errors.As(err, &nl):
		if _, _, ok := h.SessionKey(); !ok {
			return h.notReady("it has not read the inter-worker session key that signs requests forwarded to the leader")
		}
	case err != nil:
		return h.notReady("no leader is known (a rebalance is underway)")
	}
	if err := h.local.ping(ctx); err != nil {
		return api.Health{Status: api.HealthUnhealthy, Message: "Worker was unable to handle this request and may be unable to handle other requests: its assignment loop did not answer."}
	}
	if _, err := h.configs.readToEnd(ctx); err != nil {
		return h.notReady(fmt.Sprintf("it has not read the config topic %s to its end (%v)", h.cfg.ConfigTopic, err))
	}
	if err := h.statuses.readToEnd(ctx); err != nil {
		return h.notReady(fmt.Sprintf("it has not read the status topic %s to its end (%v)", h.cfg.StatusTopic, err))
	}
	h.readyOnce.Store(true)
	return api.Health{Status: api.HealthHealthy, Message: "Worker has completed startup and is ready to handle requests."}
}

// freshReadBound bounds how long a REST call waits to read the config
// topic to its end before it answers from the snapshot at hand.
const freshReadBound = 2 * time.Second

// freshBackoff: after a failed read to the end, calls answer from the
// snapshot at hand for this long without trying again, so an unreachable
// broker costs each request nothing (and a listing of many connectors does
// not add up the bounds).
const freshBackoff = 5 * time.Second

// snapshot returns the config snapshot a REST call answers from, read to
// the end of the config topic as of the call: a change that any worker
// acknowledged before this call (a create, update, pause, resume, stop or
// restart request) is in it, whichever worker answers. When the end cannot
// be read within freshReadBound, the snapshot at hand is served: a
// slightly stale answer is better than an error.
func (h *Herder) snapshot(ctx context.Context) (*clusterstate.Snapshot, error) {
	if !h.started.Load() {
		return nil, h.notStarted()
	}
	if sc, ok := ctx.Value(readScopeKey{}).(*readScope); ok {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		if sc.read {
			// Read to the end once already for this request: the snapshot
			// at hand is at least that new.
			return h.configs.Snapshot(), nil
		}
		snap, err := h.freshSnapshot(ctx)
		sc.read = err == nil
		return snap, err
	}
	return h.freshSnapshot(ctx)
}

func (h *Herder) freshSnapshot(ctx context.Context) (*clusterstate.Snapshot, error) {
	if last := h.freshFailed.Load(); last != 0 && time.Since(time.Unix(0, last)) < freshBackoff {
		return h.configs.Snapshot(), nil
	}
	rctx, cancel := context.WithTimeout(ctx, freshReadBound)
	defer cancel()
	snap, err := h.configs.readToEnd(rctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		h.freshFailed.Store(time.Now().UnixNano())
		h.log.Debug("answering from the config snapshot at hand: the config topic's end could not be read", "err", err)
		return h.configs.Snapshot(), nil
	}
	h.freshFailed.Store(0)
	return snap, nil
}

type readScopeKey struct{}

// readScope records whether the config topic was read to its end for one
// request, and the plugin catalog's stamp as that request first saw it.
type readScope struct {
	mu   sync.Mutex
	read bool

	stamped   bool
	stamp     string
	cacheable bool
}

// WithReadScope returns a context under which the herder reads the config
// topic to its end at most once: the first call made with it waits for the
// end as of that call, later ones answer from the snapshot at hand, which
// is at least as new. The REST server gives each request one scope, so a
// listing of N connectors with their status and info costs one broker
// round trip instead of 2N, and is still read-your-writes.
func WithReadScope(ctx context.Context) context.Context {
	return context.WithValue(ctx, readScopeKey{}, &readScope{})
}

// TransientError: a passing Kafka condition (a partition leader moving,
// metadata not yet known to a client that just started, a broker briefly
// unreachable) kept this worker from serving a request. The client should
// retry after RetryAfter (409 with Retry-After); Err is the Kafka error.
type TransientError struct {
	Msg        string
	RetryAfter time.Duration
	Err        error
}

func (e *TransientError) Error() string { return e.Msg }

func (e *TransientError) Unwrap() error { return e.Err }

// transient turns an error caused by a passing Kafka condition into a
// TransientError; other errors are returned as they are. parent is the
// request's context: a deadline of an internal bound that expired while
// the request still had time is transient too.
func transient(parent context.Context, err error) error {
	if err == nil {
		return nil
	}
	var te *TransientError
	var ke kafka.Error
	switch {
	case errors.As(err, &te):
		return err
	case errors.As(err, &ke) && transientKafka(ke):
	case errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil:
	default:
		return err
	}
	return &TransientError{
		Msg:        "Cannot complete request momentarily: Kafka could not serve it yet (" + err.Error() + "); retry shortly",
		RetryAfter: rebalanceRetryAfter,
		Err:        err,
	}
}

func transientKafka(e kafka.Error) bool {
	if e.IsFatal() || e.TxnRequiresAbort() {
		return false
	}
	if e.IsRetriable() || e.IsTimeout() {
		return true
	}
	switch e.Code() {
	case kafka.ErrUnknownPartition, kafka.ErrUnknownTopic, kafka.ErrUnknownTopicOrPart,
		kafka.ErrLeaderNotAvailable, kafka.ErrNotLeaderForPartition, kafka.ErrBrokerNotAvailable,
		kafka.ErrTransport, kafka.ErrAllBrokersDown, kafka.ErrNetworkException,
		kafka.ErrTimedOut, kafka.ErrTimedOutQueue, kafka.ErrRequestTimedOut,
		kafka.ErrCoordinatorNotAvailable, kafka.ErrCoordinatorLoadInProgress, kafka.ErrNotCoordinator:
		return true
	}
	return false
}

// unassignedStatus is the status of a connector or task that the config
// snapshot has but whose status record this worker has not read yet (it
// was just created, or its worker has not reported): UNASSIGNED, with the
// worker the assignment gives it to, if any.
func unassignedStatus(snap *clusterstate.Snapshot, it assignment.Item) Status {
	st := Status{State: StateUnassigned}
	a := snap.Assignment()
	if a == nil {
		return st
	}
	var owner string
	var ok bool
	if assignment.IsConnector(it) {
		owner, ok = a.OwnerOfConnector(it.Connector)
	} else {
		owner, ok = a.OwnerOfTask(it)
	}
	if ok {
		st.WorkerID = WorkerID(owner)
	}
	return st
}
