package kafka

import (
	"context"
	"errors"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkatest"
)

// connProps are connector properties against the test broker, which is
// both source and target.
func connProps(t testing.TB, kv ...string) map[string]string {
	bs := kafkatest.Bootstrap(t)
	return with(map[string]string{
		"name":             "repl",
		KeySourceBootstrap: bs,
		KeyTargetBootstrap: bs,
		KeyTargetFormat:    "${topic}.replica",
	}, kv...)
}

func startConnector(t testing.TB, props map[string]string) (*Connector, *connCtx, error) {
	t.Helper()
	c := NewConnector()
	cc := newConnCtx()
	err := c.Start(t.Context(), cc, props)
	if err == nil {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := c.Stop(ctx); err != nil {
				t.Errorf("connector stop: %v", err)
			}
		})
	}
	return c, cc, err
}

func topicPartitions(t testing.TB, topic string) int {
	t.Helper()
	md, err := kafkatest.Admin(t).GetMetadata(&topic, false, 10000)
	if err != nil {
		t.Fatal(err)
	}
	return len(md.Topics[topic].Partitions)
}

func deleteAtCleanup(t testing.TB, topics ...string) {
	t.Cleanup(func() { kafkatest.DeleteTopics(t, topics...) })
}

func TestConnectorCreatesTargetsAndSpreadsPartitions(t *testing.T) {
	a := kafkatest.Topic(t, kafkatest.Partitions(6))
	b := kafkatest.Topic(t, kafkatest.Partitions(3))
	deleteAtCleanup(t, a+".replica", b+".replica")
	c, _, err := startConnector(t, connProps(t, KeyTopics, a+","+b))
	if err != nil {
		t.Fatal(err)
	}
	if n := topicPartitions(t, a+".replica"); n != 6 {
		t.Errorf("target of %s has %d partitions, want 6", a, n)
	}
	if n := topicPartitions(t, b+".replica"); n != 3 {
		t.Errorf("target of %s has %d partitions, want 3", b, n)
	}
	cfgs, err := c.TaskConfigs(t.Context(), 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgs) != 4 {
		t.Fatalf("%d task configs, want 4", len(cfgs))
	}
	seen := map[topicPartition]bool{}
	for _, cfg := range cfgs {
		parts, err := decodePartitions(cfg[taskKeyPartitions])
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) < 2 || len(parts) > 3 {
			t.Errorf("task owns %d partitions, want 2 or 3 (9 over 4 tasks)", len(parts))
		}
		for _, tp := range parts {
			if seen[tp] {
				t.Errorf("%v assigned twice", tp)
			}
			seen[tp] = true
		}
		if cfg[taskKeySourceCluster] != brokerClusterID(t) {
			t.Errorf("task cluster %q, want the source cluster ID", cfg[taskKeySourceCluster])
		}
		if cfg[KeySourceBootstrap] == "" {
			t.Error("task config lacks the connector properties")
		}
	}
	if len(seen) != 9 {
		t.Errorf("%d partitions assigned, want 9", len(seen))
	}
}

func TestConnectorRefusesTargetWithTooFewPartitions(t *testing.T) {
	src := kafkatest.Topic(t, kafkatest.Partitions(4))
	kafkatest.CreateTopic(t, src+".replica", kafkatest.Partitions(2))
	_, _, err := startConnector(t, connProps(t, KeyTopics, src))
	if !errors.Is(err, ErrTargetTooSmall) || sdk.IsRetriable(err) {
		t.Fatalf("Start = %v, want a non-retriable ErrTargetTooSmall", err)
	}
	for _, want := range []string{src + `.replica" has 2 partitions`, `"` + src + `" has 4`, "partition.mapping=key-hash"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("trace %q lacks %q", err, want)
		}
	}
	if n := topicPartitions(t, src+".replica"); n != 2 {
		t.Errorf("the connector changed a pre-existing target: %d partitions", n)
	}
	// key-hash accepts any target partition count and tells tasks the count.
	c, _, err := startConnector(t, connProps(t, KeyTopics, src, KeyPartitionMapping, MappingKeyHash))
	if err != nil {
		t.Fatalf("key-hash Start: %v", err)
	}
	cfgs, _ := c.TaskConfigs(t.Context(), 1)
	if got := cfgs[0][taskKeyTargetPartitions]; got != src+".replica:2" {
		t.Errorf("task target partitions %q", got)
	}
}

func TestConnectorMissingTopicsAndEmptyRegex(t *testing.T) {
	missing := kafkatest.UniqueName(t, "missing")
	_, _, err := startConnector(t, connProps(t, KeyTopics, missing))
	if !errors.Is(err, ErrMissingTopics) || !sdk.IsRetriable(err) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("Start = %v, want a retriable ErrMissingTopics naming %s", err, missing)
	}
	prefix := kafkatest.UniqueName(t, "rx")
	_, _, err = startConnector(t, connProps(t, KeyTopicsRegex, regexp.QuoteMeta(prefix)+`\..*`))
	if !errors.Is(err, ErrNoTopics) || !sdk.IsRetriable(err) || !strings.Contains(err.Error(), prefix) {
		t.Fatalf("Start = %v, want a retriable ErrNoTopics quoting the regex", err)
	}
	// It heals once a topic exists.
	kafkatest.CreateTopic(t, prefix+".one", kafkatest.Partitions(2))
	deleteAtCleanup(t, prefix+".one.replica")
	if _, _, err := startConnector(t, connProps(t, KeyTopicsRegex, regexp.QuoteMeta(prefix)+`\..*`)); err != nil {
		t.Fatalf("Start after creating a matching topic: %v", err)
	}
}

func TestConnectorPicksUpNewTopicsAndPartitions(t *testing.T) {
	prefix := kafkatest.UniqueName(t, "grow")
	kafkatest.CreateTopic(t, prefix+".a", kafkatest.Partitions(2))
	deleteAtCleanup(t, prefix+".a.replica", prefix+".b.replica")
	c, cc, err := startConnector(t, connProps(t, KeyTopicsRegex, regexp.QuoteMeta(prefix)+`\..*`, KeyRefreshInterval, "200"))
	if err != nil {
		t.Fatal(err)
	}
	// The target prefix.a.replica matches the regex too: on one cluster it
	// must not become a source.
	assigned := func() []string {
		cfgs, err := c.TaskConfigs(t.Context(), 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, cfg := range cfgs {
			parts, _ := decodePartitions(cfg[taskKeyPartitions])
			for _, tp := range parts {
				out = append(out, tp.String())
			}
		}
		slices.Sort(out)
		return out
	}
	want := []string{prefix + ".a:0", prefix + ".a:1"}
	if got := assigned(); !slices.Equal(got, want) {
		t.Fatalf("assigned %v, want %v", got, want)
	}
	awaitReconfig := func(what string) {
		t.Helper()
		select {
		case <-cc.reconfig:
		case err := <-cc.raised:
			t.Fatalf("connector raised %v while waiting for %s", err, what)
		case <-time.After(30 * time.Second):
			t.Fatalf("no task reconfiguration requested after %s", what)
		}
	}
	kafkatest.CreateTopic(t, prefix+".b", kafkatest.Partitions(1))
	awaitReconfig("a new matching topic")
	want = []string{prefix + ".a:0", prefix + ".a:1", prefix + ".b:0"}
	if got := assigned(); !slices.Equal(got, want) {
		t.Fatalf("assigned %v, want %v", got, want)
	}
	if n := topicPartitions(t, prefix+".b.replica"); n != 1 {
		t.Errorf("new target has %d partitions", n)
	}

	// Add partitions to a source topic: the target grows first, then the
	// tasks get the new partitions.
	res, err := kafkatest.Admin(t).CreatePartitions(t.Context(), []ckafka.PartitionsSpecification{{Topic: prefix + ".a", IncreaseTo: 4}})
	if err != nil || res[0].Error.Code() != ckafka.ErrNoError {
		t.Fatalf("create partitions: %v %v", err, res)
	}
	awaitReconfig("added partitions")
	if n := topicPartitions(t, prefix+".a.replica"); n != 4 {
		t.Errorf("target of the grown topic has %d partitions, want 4", n)
	}
	want = []string{prefix + ".a:0", prefix + ".a:1", prefix + ".a:2", prefix + ".a:3", prefix + ".b:0"}
	if got := assigned(); !slices.Equal(got, want) {
		t.Fatalf("assigned %v, want %v", got, want)
	}

	// Deleting every matching topic fails the connector with a clear trace.
	kafkatest.DeleteTopics(t, prefix+".a", prefix+".b")
	select {
	case err := <-cc.raised:
		if !errors.Is(err, ErrNoTopics) {
			t.Errorf("raised %v, want ErrNoTopics", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no error raised after the source topics were deleted")
	}
}

func TestConnectorRefusesSelfReplication(t *testing.T) {
	src := kafkatest.Topic(t, kafkatest.Partitions(1))
	bs := kafkatest.Bootstrap(t)
	// Different spellings of the same broker defeat the static check; the
	// cluster ID comparison catches it.
	host, port, _ := net.SplitHostPort(bs)
	alias := "localhost:" + port
	if host == "localhost" {
		alias = "127.0.0.1:" + port
	}
	props := connProps(t, KeyTopics, src, KeyTargetFormat, "${topic}", KeyTargetBootstrap, alias)
	errs := NewConnector().Validate(t.Context(), props)
	if len(errs) != 1 || errs[0].Key != KeyTargetFormat || !strings.Contains(errs[0].Message, "copied onto itself") {
		t.Errorf("Validate = %+v, want the self-replication error", errs)
	}
	if _, _, err := startConnector(t, props); !errors.Is(err, ErrSelfReplication) {
		t.Errorf("Start = %v, want ErrSelfReplication", err)
	}
	// A listed topic that is the target of another listed topic loops.
	kafkatest.CreateTopic(t, src+".replica", kafkatest.Partitions(1))
	if _, _, err := startConnector(t, connProps(t, KeyTopics, src+","+src+".replica")); !errors.Is(err, ErrSelfReplication) {
		t.Errorf("Start = %v, want ErrSelfReplication for a source that is another source's target", err)
	}
}

func TestConnectorUnreachableSource(t *testing.T) {
	dead := deadAddress(t)
	start := time.Now()
	_, _, err := startConnector(t, connProps(t, KeySourceBootstrap, dead, KeyTopics, "x"))
	if !errors.Is(err, ErrUnreachable) || !sdk.IsRetriable(err) || !strings.Contains(err.Error(), "source cluster at "+dead) {
		t.Fatalf("Start = %v, want a retriable ErrUnreachable naming the source", err)
	}
	if d := time.Since(start); d > 2*discoveryTimeout {
		t.Errorf("Start took %v", d)
	}
}

func TestTaskFailsAfterSourceUnreachableTimeout(t *testing.T) {
	dead := deadAddress(t)
	props := taskProps(t, "c1", []topicPartition{{"x", 0}}, KeySourceBootstrap, dead, KeyUnreachableTimeout, "1500")
	task := startTask(t, newTaskCtx("repl", 0), props)
	deadline := time.Now().Add(60 * time.Second)
	for {
		recs, err := task.Poll(t.Context())
		if err != nil {
			if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), dead) {
				t.Fatalf("Poll = %v, want ErrUnreachable naming %s", err, dead)
			}
			return
		}
		if len(recs) > 0 {
			t.Fatal("records from a dead cluster")
		}
		if time.Now().After(deadline) {
			t.Fatal("the task kept polling an unreachable cluster without failing")
		}
	}
}

// deadAddress returns a loopback address nothing listens on.
func deadAddress(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
