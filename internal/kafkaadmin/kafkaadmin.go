// Package kafkaadmin keeps librdkafka admin requests from spinning while
// no broker answers.
//
// An admin request of librdkafka 2.11.1 (DescribeTopics, DescribeCluster,
// DescribeConfigs, CreateTopics, ListOffsets and the group calls alike)
// that is issued while its broker refuses connections does not wait out the
// reconnect backoff: each failed connection attempt is a broker state
// change, the state change wakes the waiting request, and the request asks
// for a new connection at once. One such request keeps a core busy for its
// whole timeout whatever reconnect.backoff.ms says. A worker that restarts
// failed tasks during a broker outage issues such requests again and again,
// and on a small machine the spinning clients starve the very broker that is
// trying to come back. A metadata request does not have this defect: it
// fails within the backoff and costs nothing.
//
// Reachable is therefore the gate in front of every admin request the
// worker and the connectors make: when no broker answers a metadata request,
// the caller gets the transport error at once and fails (and is retried with
// its own backoff) instead of spinning. A broker that goes away between the
// check and the request still costs that one request's timeout.
//
// It owns only this check; it must not create or configure clients.
package kafkaadmin

import (
	"context"
	"fmt"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// MetadataGetter is what Reachable needs of a client: every
// confluent-kafka-go client (AdminClient, Producer, Consumer) has it.
type MetadataGetter interface {
	GetMetadata(topic *string, allTopics bool, timeoutMs int) (*kafka.Metadata, error)
}

// maxWait bounds the check when ctx has no deadline: a metadata request
// that no broker answers in that time would not have made an admin request
// succeed either.
const maxWait = 10 * time.Second

// Reachable returns nil when a broker of c's cluster answers a metadata
// request (for no topic, so it creates none) before ctx ends or maxWait
// passes; otherwise an error that wraps the client's.
func Reachable(ctx context.Context, c MetadataGetter) error {
	wait := maxWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl))
	}
	if wait <= 0 {
		return fmt.Errorf("no broker reachable: %w", context.DeadlineExceeded)
	}
	md, err := c.GetMetadata(nil, false, max(1, int(wait.Milliseconds())))
	if err != nil {
		return fmt.Errorf("no broker reachable: %w", err)
	}
	if len(md.Brokers) == 0 {
		return fmt.Errorf("no broker reachable: the metadata response lists no broker")
	}
	return nil
}
