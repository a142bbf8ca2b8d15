package compacted

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkaadmin"
)

// ends asks where every partition ends. With retry, an answer that says
// the broker or a partition leader is away is asked again until ctx ends.
func (r *Reader) ends(ctx context.Context, iso kafka.IsolationLevel, retry bool) (map[int32]int64, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("topic %q: %w", r.o.Topic, ErrClosed)
	}
	r.queries.Add(1)
	r.mu.Unlock()
	defer r.queries.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(r.closing, cancel)()

	req := make(map[kafka.TopicPartition]kafka.OffsetSpec, len(r.parts))
	for _, p := range r.parts {
		req[kafka.TopicPartition{Topic: &r.o.Topic, Partition: p}] = kafka.LatestOffsetSpec
	}
	backoff := 50 * time.Millisecond
	for {
		if retry && r.o.OnEndQuery != nil {
			r.o.OnEndQuery()
		}
		ends, err := r.queryEnds(ctx, req, iso)
		if err == nil {
			return ends, nil
		}
		if !retry || !transient(err) || ctx.Err() != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

func (r *Reader) queryEnds(ctx context.Context, req map[kafka.TopicPartition]kafka.OffsetSpec, iso kafka.IsolationLevel) (map[int32]int64, error) {
	if err := kafkaadmin.Reachable(ctx, r.admin); err != nil {
		return nil, fmt.Errorf("topic %q: end offsets: %w", r.o.Topic, err)
	}
	res, err := r.admin.ListOffsets(ctx, req, kafka.SetAdminIsolationLevel(iso))
	if err != nil {
		return nil, fmt.Errorf("topic %q: end offsets: %w", r.o.Topic, err)
	}
	ends := make(map[int32]int64, len(res.ResultInfos))
	var failed error
	for tp, info := range res.ResultInfos {
		if info.Error.Code() != kafka.ErrNoError {
			// A lasting error wins over a passing one, so the caller
			// does not retry what cannot succeed.
			if failed == nil || transient(failed) {
				failed = fmt.Errorf("topic %q partition %d: end offset: %w", r.o.Topic, tp.Partition, info.Error)
			}
			continue
		}
		ends[tp.Partition] = int64(info.Offset)
	}
	if failed != nil {
		return nil, failed
	}
	for _, p := range r.parts {
		if _, ok := ends[p]; !ok {
			return nil, fmt.Errorf("topic %q partition %d: no end offset in the answer", r.o.Topic, p)
		}
	}
	return ends, nil
}

// transient reports the errors that pass on their own: a broker that is
// away or restarting, a leader election underway.
func transient(err error) bool {
	var ke kafka.Error
	if !errors.As(err, &ke) {
		return false
	}
	if ke.IsRetriable() || ke.IsTimeout() {
		return true
	}
	switch ke.Code() {
	case kafka.ErrNotLeaderForPartition, kafka.ErrLeaderNotAvailable, kafka.ErrOffsetNotAvailable,
		kafka.ErrFencedLeaderEpoch, kafka.ErrUnknownLeaderEpoch, kafka.ErrRequestTimedOut,
		kafka.ErrTransport, kafka.ErrAllBrokersDown, kafka.ErrBrokerNotAvailable, kafka.ErrNetworkException,
		kafka.ErrTimedOut, kafka.ErrTimedOutQueue, kafka.ErrWaitCoord, kafka.ErrNotCoordinator:
		return true
	}
	return false
}

// timeoutMs bounds a librdkafka call that takes a millisecond timeout
// instead of a context: at most limit, no later than ctx's deadline, and
// at least 1 ms, as 0 means "do not wait" to some calls.
func timeoutMs(ctx context.Context, limit int) int {
	if dl, ok := ctx.Deadline(); ok {
		return max(1, min(limit, int(time.Until(dl).Milliseconds())))
	}
	return limit
}
