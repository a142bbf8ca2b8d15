package kafkalog

import (
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/syncbuf"
)

// refusedBootstrap is a loopback address nothing listens on: every
// connection attempt is refused at once, and librdkafka logs a FAIL line.
func refusedBootstrap(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// awaitRecord waits for a JSON record of buf that matches.
func awaitRecord(t *testing.T, buf *syncbuf.Buffer, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, l := range strings.Split(buf.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && match(m) {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no matching log record within 30s; log:\n%s", buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestClientLogsBecomeSlogRecords(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(log *slog.Logger, cm kafka.ConfigMap) (close func(), err error)
	}{
		{"producer", func(log *slog.Logger, cm kafka.ConfigMap) (func(), error) {
			p, err := NewProducer(log, cm)
			if err != nil {
				return nil, err
			}
			go func() {
				for range p.Events() {
				}
			}()
			return p.Close, nil
		}},
		{"consumer", func(log *slog.Logger, cm kafka.ConfigMap) (func(), error) {
			cm["group.id"] = "kafkalog-test"
			c, err := NewConsumer(log, cm)
			if err != nil {
				return nil, err
			}
			// A consumer connects when it has something to do.
			if err := c.Subscribe("kafkalog-test", nil); err != nil {
				return nil, err
			}
			return func() { _ = c.Close() }, nil
		}},
		{"admin", func(log *slog.Logger, cm kafka.ConfigMap) (func(), error) {
			a, err := NewAdmin(log, cm)
			if err != nil {
				return nil, err
			}
			return a.Close, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncbuf.Buffer
			log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})).With("connector", "c1")
			closeClient, err := tc.open(log, kafka.ConfigMap{"bootstrap.servers": refusedBootstrap(t), "client.id": "kafkalog-" + tc.name})
			if err != nil {
				t.Fatal(err)
			}
			m := awaitRecord(t, &buf, func(m map[string]any) bool { return m["rdkafka_tag"] == "FAIL" })
			if c, _ := m["client"].(string); !strings.HasPrefix(c, "kafkalog-"+tc.name+"#") {
				t.Errorf("client attribute %q does not name the client", c)
			}
			if m["connector"] != "c1" || m["level"] != "ERROR" || !strings.Contains(m["msg"].(string), "refused") {
				t.Errorf("record %v", m)
			}
			closeClient()
		})
	}
}

// The goroutine that forwards a client's lines ends when the client is
// closed.
func TestForwardEndsWhenClientCloses(t *testing.T) {
	var buf syncbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	cm := kafka.ConfigMap{"bootstrap.servers": refusedBootstrap(t)}
	Enable(cm)
	p, err := kafka.NewProducer(&cm)
	if err != nil {
		t.Fatal(err)
	}
	done := Forward(log, p.Logs())
	awaitRecord(t, &buf, func(m map[string]any) bool { return m["rdkafka_tag"] == "FAIL" })
	p.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the forwarding goroutine still runs after the client was closed")
	}
}

func TestLevel(t *testing.T) {
	for syslog, want := range map[int]slog.Level{0: slog.LevelError, 3: slog.LevelError, 4: slog.LevelWarn, 5: slog.LevelInfo, 6: slog.LevelInfo, 7: slog.LevelInfo} {
		if got := Level(syslog); got != want {
			t.Errorf("Level(%d) = %v, want %v", syslog, got, want)
		}
	}
}
