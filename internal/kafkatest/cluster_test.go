package kafkatest_test

import (
	"context"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkatest"
)

// TestClusterBIsIndependent guards what the cross-cluster tests stand on:
// cluster b is another Kafka cluster (its own id, ports and topics), not a
// second listener of cluster a.
func TestClusterBIsIndependent(t *testing.T) {
	a, b := kafkatest.A(), kafkatest.B()
	if a.Bootstrap(t) == b.Bootstrap(t) {
		t.Fatalf("clusters a and b share the bootstrap %s", a.Bootstrap(t))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	idA, err := a.Admin(t).ClusterID(ctx)
	if err != nil {
		t.Fatalf("cluster a id: %v", err)
	}
	idB, err := b.Admin(t).ClusterID(ctx)
	if err != nil {
		t.Fatalf("cluster b id: %v", err)
	}
	if idA == idB {
		t.Fatalf("clusters a and b have the same cluster id %s", idA)
	}

	topic := b.Topic(t)
	md, err := a.Admin(t).GetMetadata(&topic, false, 5000)
	if err != nil {
		t.Fatalf("metadata on a: %v", err)
	}
	if tm, ok := md.Topics[topic]; ok && tm.Error.Code() == 0 {
		t.Fatalf("topic %s created on cluster b is visible on cluster a", topic)
	}
}
