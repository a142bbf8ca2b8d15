package checkpoint

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkatest"
)

type taskCtx struct{}

func (taskCtx) Connector() string                    { return "cp" }
func (taskCtx) TaskID() int                          { return 0 }
func (taskCtx) Logger() *slog.Logger                 { return slog.New(slog.NewTextHandler(os.Stderr, nil)) }
func (taskCtx) Metrics() prometheus.Registerer       { return prometheus.NewRegistry() }
func (taskCtx) Offset(map[string]any) map[string]any { return nil }
func (taskCtx) Transactions() sdk.TransactionContext { return nil }

// deadAddress is a local port nobody listens on.
func deadAddress(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func TestUnreachableSourceFailsWithATrace(t *testing.T) {
	b := kafkatest.B().Bootstrap(t)
	alias := kafkatest.UniqueName(t, "gone")
	t.Cleanup(func() {
		kafkatest.B().DeleteTopics(t, "mm2-offset-syncs."+alias+".internal", alias+".checkpoints.internal")
	})
	task := &Task{}
	ctx := context.Background()
	err := task.Start(ctx, taskCtx{}, map[string]string{
		KeySourceBootstrap: deadAddress(t), KeyTargetBootstrap: b, KeySourceAlias: alias,
		KeyUnreachableTimeout: "2000", KeyEmitInterval: "1", KeyRefreshGroups: "1",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = task.Stop(ctx) })
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		_, err = task.Poll(ctx)
		if err != nil {
			break
		}
	}
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), KeyUnreachableTimeout) {
		t.Fatalf("poll error = %v, want ErrUnreachable naming %s", err, KeyUnreachableTimeout)
	}
}

func TestConfig(t *testing.T) {
	base := map[string]string{KeySourceBootstrap: "a:9092", KeyTargetBootstrap: "b:9092", KeySourceAlias: "A"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c, err := ParseConfig(base)
	if err != nil {
		t.Fatal(err)
	}
	if c.CheckpointsTopic() != "A.checkpoints.internal" || c.OffsetSyncsTopic() != "mm2-offset-syncs.A.internal" {
		t.Errorf("topics %s, %s", c.CheckpointsTopic(), c.OffsetSyncsTopic())
	}
	for group, want := range map[string]bool{"app": true, "console-consumer-1": false, "connect-x": false, "__x": false} {
		if c.Selected(group) != want {
			t.Errorf("Selected(%q) = %v, want %v", group, !want, want)
		}
	}
	c, err = ParseConfig(with(KeyGroups, "orders-.*, billing", KeyGroupsExclude, "orders-test"))
	if err != nil {
		t.Fatal(err)
	}
	for group, want := range map[string]bool{"orders-1": true, "billing": true, "billing2": false, "orders-test": false} {
		if c.Selected(group) != want {
			t.Errorf("Selected(%q) = %v, want %v", group, !want, want)
		}
	}
	bad := []struct{ key, value, want string }{
		{KeyOffsetSyncsLocation, "source", "only target is supported"},
		{KeyPolicyClass, "com.example.Custom", "unknown replication policy"},
		{KeyGroups, "(", "not a regular expression"},
		{KeyEmitInterval, "0", KeyEmitInterval},
	}
	for _, b := range bad {
		if _, err := ParseConfig(with(b.key, b.value)); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s=%s: err = %v, want %q", b.key, b.value, err, b.want)
		}
	}
	if errs := NewConnector().Validate(context.Background(), with(KeyPolicyClass, "x")); len(errs) != 1 || errs[0].Key != KeyPolicyClass {
		t.Errorf("Validate = %+v, want one error on %s", errs, KeyPolicyClass)
	}
	if errs := NewConnector().Validate(context.Background(), with("value.converter", "org.apache.kafka.connect.json.JsonConverter")); len(errs) != 1 || errs[0].Key != "value.converter" {
		t.Errorf("Validate = %+v, want one error on value.converter", errs)
	}
	if errs := NewConnector().Validate(context.Background(), with("value.converter", byteArrayConverter)); len(errs) != 0 {
		t.Errorf("Validate = %+v with ByteArrayConverter", errs)
	}
}

func TestUnreachableTargetFailsStart(t *testing.T) {
	task := &Task{}
	err := task.Start(context.Background(), taskCtx{}, map[string]string{
		KeySourceBootstrap: kafkatest.A().Bootstrap(t), KeyTargetBootstrap: deadAddress(t), KeySourceAlias: "A",
	})
	if err == nil {
		_ = task.Stop(context.Background())
		t.Fatal("Start succeeded with an unreachable target")
	}
	if !strings.Contains(err.Error(), "A.checkpoints.internal on the target") {
		t.Fatalf("Start error = %v, want one naming the checkpoints topic on the target", err)
	}
}
