package membership

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkatest"
)

// start runs a member of group for url. leave ends its poll loop and
// closes it (leaving the group); it runs at cleanup if the test did not.
func start(t *testing.T, bootstrap, group, topic, url string) (m *Member, leave func()) {
	t.Helper()
	m, err := New(Config{
		Group: group, Topic: topic, URL: url,
		SessionTimeout: 10 * time.Second, HeartbeatInterval: time.Second, RebalanceTimeout: 30 * time.Second,
		Client: kafka.ConfigMap{
			"bootstrap.servers":      bootstrap,
			"client.id":              url,
			"go.logs.channel.enable": true,
		},
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnChange: func() {},
		OnFatal:  func(err error) { t.Errorf("%s: fatal member error: %v", url, err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	leave = func() { once.Do(func() { cancel(); m.Close() }) }
	t.Cleanup(leave)
	if err := m.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return m, leave
}

// Two members of one group: exactly one leads, the group lists both by
// their URLs, and when the leader leaves the other one leads.
func TestOneMemberLeadsAndTheOtherTakesOver(t *testing.T) {
	bootstrap := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, kafkatest.Partitions(1))
	group := kafkatest.UniqueName(t, "g")
	a, leaveA := start(t, bootstrap, group, topic, "http://a:1")
	b, leaveB := start(t, bootstrap, group, topic, "http://b:1")

	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		return a.Joined() && b.Joined() && a.Leads() != b.Leads(), "want both joined and exactly one leading"
	})
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		urls, err := a.Members(context.Background())
		return err == nil && slices.Equal(urls, []string{"http://a:1", "http://b:1"}), "the group does not list both members by URL"
	})

	other, leaveLeader := b, leaveA
	if b.Leads() {
		other, leaveLeader = a, leaveB
	}
	epoch := other.Epoch()
	leaveLeader()
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		return other.Leads(), "the remaining member does not lead"
	})
	if other.Epoch() <= epoch {
		t.Fatalf("epoch %d did not move past %d", other.Epoch(), epoch)
	}
}
