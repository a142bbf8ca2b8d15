// Package kafkatest connects tests to the real Kafka clusters that
// scripts/kafka.sh (make kafka-up) runs, and gives each test its own topics.
//
// The main cluster's address comes from the KAFKA_BOOTSTRAP environment
// variable or, when that is unset, from .run/kafka.env at the repository
// root; the package-level functions use it. B returns the second, independent
// cluster (KAFKA_BOOTSTRAP_B, .run/kafka-b.env) of the cross-cluster tests. Without a
// reachable broker a test fails when CI=true (CI must never pass by skipping)
// and skips with instructions otherwise.
//
// What this package must not do: start or stop the broker (the script owns
// its lifecycle), or be imported by non-test code.
package kafkatest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/citest"
	"github.com/connectd/connectd/internal/repo"
)

// Cluster is one of the test clusters scripts/kafka.sh runs: A, the one
// every test uses, or B, the independent second cluster of the
// cross-cluster replication tests.
type Cluster struct {
	name    string // "a" or "b", as scripts/kafka.sh names them
	envVar  string // the variable holding the bootstrap address
	envFile string // its file under .run/
}

// A is the main test cluster (KAFKA_BOOTSTRAP, .run/kafka.env); the
// package-level functions use it.
func A() Cluster { return Cluster{name: "a", envVar: "KAFKA_BOOTSTRAP", envFile: "kafka.env"} }

// B is the second, independent cluster (KAFKA_BOOTSTRAP_B, .run/kafka-b.env).
func B() Cluster { return Cluster{name: "b", envVar: "KAFKA_BOOTSTRAP_B", envFile: "kafka-b.env"} }

// Bootstrap returns the address of the main test cluster, failing (CI=true)
// or skipping the test when no broker answers.
func Bootstrap(t testing.TB) string {
	t.Helper()
	return A().Bootstrap(t)
}

// Bootstrap returns the cluster's address, failing (CI=true) or skipping the
// test when no broker answers.
func (c Cluster) Bootstrap(t testing.TB) string {
	t.Helper()
	addr, err := c.lookupBootstrap()
	if err == nil {
		err = dial(addr)
	}
	if err != nil {
		citest.Unavailable(t, "kafkatest: no Kafka cluster %s: %v; start it with `scripts/kafka.sh up %s` (`make kafka-up` starts both) or set %s=host:port",
			c.name, err, c.name, c.envVar)
	}
	return addr
}

func (c Cluster) lookupBootstrap() (string, error) {
	if v := os.Getenv(c.envVar); v != "" {
		return v, nil
	}
	root, err := repo.Root()
	if err != nil {
		return "", err
	}
	path := filepath.Join(root, ".run", c.envFile)
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s is unset and %s is missing", c.envVar, path)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), c.envVar+"="); ok && v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("%s has no %s line", path, c.envVar)
}

func dial(addr string) error {
	first, _, _ := strings.Cut(addr, ",")
	c, err := net.DialTimeout("tcp", first, 3*time.Second)
	if err != nil {
		return fmt.Errorf("broker %s unreachable: %w", first, err)
	}
	return c.Close()
}

// Admin returns an admin client for the main test cluster, closed at cleanup.
func Admin(t testing.TB) *kafka.AdminClient {
	t.Helper()
	return A().Admin(t)
}

// Admin returns an admin client for the cluster, closed at cleanup.
func (c Cluster) Admin(t testing.TB) *kafka.AdminClient {
	t.Helper()
	a, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": c.Bootstrap(t)})
	if err != nil {
		t.Fatalf("kafkatest: admin client: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}

// TopicOption adjusts a topic created by Topic.
type TopicOption func(*kafka.TopicSpecification)

// Partitions sets the partition count (default 1).
func Partitions(n int) TopicOption {
	return func(s *kafka.TopicSpecification) { s.NumPartitions = n }
}

// Config sets a topic-level configuration entry.
func Config(key, value string) TopicOption {
	return func(s *kafka.TopicSpecification) {
		if s.Config == nil {
			s.Config = map[string]string{}
		}
		s.Config[key] = value
	}
}

var unsafeTopicChars = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// UniqueName returns a topic-safe name derived from the test's name, unique
// across runs against the same broker.
func UniqueName(t testing.TB, prefix string) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("kafkatest: random: %v", err)
	}
	name := unsafeTopicChars.ReplaceAllString(t.Name(), "_")
	if len(name) > 120 {
		name = name[:120]
	}
	if prefix != "" {
		name = prefix + "-" + name
	}
	return name + "-" + hex.EncodeToString(b[:])
}

// Topic creates a topic with a unique name for this test and deletes it at
// cleanup. It returns once the broker reports the topic's leaders.
func Topic(t testing.TB, opts ...TopicOption) string {
	t.Helper()
	return A().Topic(t, opts...)
}

// Topic creates a uniquely named topic on the cluster, deleted at cleanup.
func (c Cluster) Topic(t testing.TB, opts ...TopicOption) string {
	t.Helper()
	name := UniqueName(t, "t")
	c.CreateTopic(t, name, opts...)
	return name
}

// CreateTopic creates a topic with the given name (deleted at cleanup).
func CreateTopic(t testing.TB, name string, opts ...TopicOption) {
	t.Helper()
	A().CreateTopic(t, name, opts...)
}

// CreateTopic creates a topic on the cluster (deleted at cleanup).
func (c Cluster) CreateTopic(t testing.TB, name string, opts ...TopicOption) {
	t.Helper()
	spec := kafka.TopicSpecification{Topic: name, NumPartitions: 1, ReplicationFactor: 1}
	for _, o := range opts {
		o(&spec)
	}
	admin := c.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := admin.CreateTopics(ctx, []kafka.TopicSpecification{spec}, kafka.SetAdminOperationTimeout(20*time.Second))
	if err != nil {
		t.Fatalf("kafkatest: create topic %s: %v", name, err)
	}
	if res[0].Error.Code() != kafka.ErrNoError {
		t.Fatalf("kafkatest: create topic %s: %v", name, res[0].Error)
	}
	t.Cleanup(func() { c.DeleteTopics(t, name) })
	c.WaitForTopic(t, name, spec.NumPartitions)
}

// DeleteTopics deletes topics, ignoring ones that do not exist.
func DeleteTopics(t testing.TB, names ...string) {
	t.Helper()
	A().DeleteTopics(t, names...)
}

// DeleteTopics deletes topics on the cluster, ignoring ones that do not exist.
func (c Cluster) DeleteTopics(t testing.TB, names ...string) {
	t.Helper()
	a, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": c.Bootstrap(t)})
	if err != nil {
		t.Errorf("kafkatest: admin client: %v", err)
		return
	}
	defer a.Close()
	// A loaded broker (the whole suite runs three packages at a time) can
	// take longer than a test would wait for a delete it does not watch.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := a.DeleteTopics(ctx, names, kafka.SetAdminOperationTimeout(60*time.Second))
	if err != nil {
		t.Errorf("kafkatest: delete topics %v: %v", names, err)
		return
	}
	for _, r := range res {
		if c := r.Error.Code(); c != kafka.ErrNoError && c != kafka.ErrUnknownTopicOrPart {
			t.Errorf("kafkatest: delete topic %s: %v", r.Topic, r.Error)
		}
	}
}

// WaitForTopic waits until every partition of topic has a leader.
func WaitForTopic(t testing.TB, topic string, partitions int) {
	t.Helper()
	A().WaitForTopic(t, topic, partitions)
}

// WaitForTopic waits until every partition of topic on the cluster has a leader.
func (c Cluster) WaitForTopic(t testing.TB, topic string, partitions int) {
	t.Helper()
	admin := c.Admin(t)
	Eventually(t, 30*time.Second, func() (bool, string) {
		md, err := admin.GetMetadata(&topic, false, 5000)
		if err != nil {
			return false, err.Error()
		}
		tm, ok := md.Topics[topic]
		if !ok || tm.Error.Code() != kafka.ErrNoError {
			return false, fmt.Sprintf("topic %s not ready: %v", topic, tm.Error)
		}
		if len(tm.Partitions) != partitions {
			return false, fmt.Sprintf("topic %s has %d of %d partitions", topic, len(tm.Partitions), partitions)
		}
		for _, p := range tm.Partitions {
			if p.Leader < 0 {
				return false, fmt.Sprintf("partition %d has no leader", p.ID)
			}
		}
		return true, ""
	})
}

// Eventually polls cond until it reports true or the timeout passes, then
// fails the test with cond's last explanation.
func Eventually(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	wait := 10 * time.Millisecond
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %s", timeout, why)
		}
		time.Sleep(wait)
		wait = min(wait*2, 500*time.Millisecond)
	}
}
