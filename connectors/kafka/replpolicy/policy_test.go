package replpolicy_test

import (
	"errors"
	"testing"

	"github.com/connectd/connectd/connectors/kafka/replpolicy"
)

func TestDefaultPolicyNames(t *testing.T) {
	for _, sep := range []string{".", "_", "--"} {
		p, err := replpolicy.New("DefaultReplicationPolicy", sep, "a")
		if err != nil {
			t.Fatal(err)
		}
		remote := p.RemoteTopic("a", "orders")
		if want := "a" + sep + "orders"; remote != want {
			t.Errorf("sep %q: RemoteTopic = %q, want %q", sep, remote, want)
		}
		if got := p.TopicSource(remote); got != "a" {
			t.Errorf("sep %q: TopicSource(%q) = %q", sep, remote, got)
		}
		if got := p.UpstreamTopic(remote); got != "orders" {
			t.Errorf("sep %q: UpstreamTopic(%q) = %q", sep, remote, got)
		}
		twice := p.RemoteTopic("b", remote)
		if got := replpolicy.OriginalTopic(p, twice); got != "orders" {
			t.Errorf("sep %q: OriginalTopic(%q) = %q", sep, twice, got)
		}
		if got := p.TopicSource("orders"); got != "" {
			t.Errorf("sep %q: a local topic has source %q", sep, got)
		}
		if !p.IsInternalTopic(p.CheckpointsTopic("a")) || !p.IsInternalTopic(p.OffsetSyncsTopic("b")) {
			t.Errorf("sep %q: MM2 internal topics %q, %q not internal", sep, p.CheckpointsTopic("a"), p.OffsetSyncsTopic("b"))
		}
	}
}

func TestMM2InternalTopicNames(t *testing.T) {
	p, _ := replpolicy.New(replpolicy.DefaultClass, ".", "")
	for got, want := range map[string]string{
		p.CheckpointsTopic("a"): "a.checkpoints.internal",
		p.OffsetSyncsTopic("b"): "mm2-offset-syncs.b.internal",
		p.HeartbeatsTopic():     "heartbeats",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	for _, topic := range []string{"__consumer_offsets", "__transaction_state", ".hidden", "mm2-configs.a.internal"} {
		if !p.IsInternalTopic(topic) {
			t.Errorf("%q is not internal", topic)
		}
	}
	if p.IsInternalTopic("orders") {
		t.Error("orders is internal")
	}
}

func TestIsCycle(t *testing.T) {
	p, _ := replpolicy.New(replpolicy.DefaultClass, ".", "a")
	cases := []struct {
		topic, target string
		cycle         bool
	}{
		{"orders", "b", false},
		{"b.orders", "b", true},      // came from b: never back to b
		{"b.orders", "c", false},     // b → a → c is a chain, not a cycle
		{"c.b.orders", "b", true},    // b → c → a → b
		{"heartbeats", "b", false},   // local heartbeats go out
		{"b.heartbeats", "c", false}, // and travel on
	}
	for _, c := range cases {
		if got := replpolicy.IsCycle(p, c.topic, c.target); got != c.cycle {
			t.Errorf("IsCycle(%q → %s) = %v, want %v", c.topic, c.target, got, c.cycle)
		}
	}
}

func TestIdentityPolicy(t *testing.T) {
	p, err := replpolicy.New(replpolicy.IdentityClass, ".", "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.RemoteTopic("a", "orders"); got != "orders" {
		t.Errorf("RemoteTopic = %q, want the name kept", got)
	}
	if got := p.RemoteTopic("a", "heartbeats"); got != "a.heartbeats" {
		t.Errorf("heartbeats = %q, want a.heartbeats", got)
	}
	if got := p.TopicSource("orders"); got != "a" {
		t.Errorf("TopicSource = %q, want the configured source alias", got)
	}
	if got := replpolicy.OriginalTopic(p, "orders"); got != "orders" {
		t.Errorf("OriginalTopic = %q", got)
	}
}

func TestUnknownClass(t *testing.T) {
	_, err := replpolicy.New("com.example.MyPolicy", ".", "a")
	if !errors.Is(err, replpolicy.ErrUnknownClass) {
		t.Fatalf("err = %v, want ErrUnknownClass", err)
	}
	if _, err := replpolicy.New(replpolicy.DefaultClass, "", "a"); err == nil {
		t.Fatal("empty separator accepted")
	}
}
