package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/connectors/datagen"
	"github.com/connectd/connectd/internal/kafkatest"
)

func produceValues(t *testing.T, topic string, recs [][2]string) {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t), "enable.idempotence": true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	done := make(chan kafka.Event, len(recs))
	for _, r := range recs {
		if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: 0},
			Key: []byte(r[0]), Value: []byte(r[1])}, done); err != nil {
			t.Fatal(err)
		}
	}
	for range recs {
		if m := (<-done).(*kafka.Message); m.TopicPartition.Error != nil {
			t.Fatal(m.TopicPartition.Error)
		}
	}
}

func runCLI(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// connectd verify: exit codes, text and JSON output, against real topics.
func TestVerifyCommand(t *testing.T) {
	bs := kafkatest.Bootstrap(t)
	const seed, card = 3, 4
	var recs [][2]string
	for seq := range int64(20) {
		c := datagen.CounterAt(seed, card, seq)
		recs = append(recs, [2]string{c.Key, fmt.Sprintf(`{"amount":%d,"key":%q,"seq":%d}`, c.Amount, c.Key, seq)})
	}
	good := kafkatest.Topic(t)
	produceValues(t, good, recs)
	bad := kafkatest.Topic(t)
	produceValues(t, bad, append(recs[:5:5], recs[6:]...)) // seq 5 lost
	copyDup := kafkatest.Topic(t)
	produceValues(t, copyDup, append(recs, recs[3])) // one duplicate

	dg := func(topic string, extra ...string) []string {
		return append([]string{"verify", "datagen", "--bootstrap-server", bs, "--topic", topic, "--tasks", "2",
			"--seed", fmt.Sprint(seed), "--cardinality", fmt.Sprint(card)}, extra...)
	}
	code, out, errOut := runCLI(dg(good, "--iterations", "10", "--sums")...)
	if code != exitOK || !strings.HasPrefix(out, "OK:") || !strings.Contains(out, "sums:") {
		t.Fatalf("datagen good: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(dg(good, "--iterations", "10", "--output", "json", "--sums")...)
	var js struct {
		OK       bool             `json:"ok"`
		Distinct int64            `json:"distinct"`
		Sums     map[string]int64 `json:"sums"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil || code != exitOK || !js.OK || js.Distinct != 20 || len(js.Sums) == 0 {
		t.Fatalf("datagen json: exit %d %v\n%s", code, err, out)
	}
	code, out, _ = runCLI(dg(bad)...)
	if code != exitFailure || !strings.HasPrefix(out, "FAILED") || !strings.Contains(out, "task 1: seq 5 is missing") {
		t.Fatalf("datagen bad: exit %d\n%s", code, out)
	}

	tp := func(src, dst string, extra ...string) []string {
		return append([]string{"verify", "topics", "--bootstrap-server", bs, "--source", src, "--target", dst}, extra...)
	}
	if code, out, _ := runCLI(tp(good, good)...); code != exitOK || !strings.HasPrefix(out, "OK:") {
		t.Fatalf("topics same: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(tp(good, copyDup, "--output", "json")...)
	var cj struct {
		OK         bool  `json:"ok"`
		Duplicates int64 `json:"duplicates"`
	}
	if err := json.Unmarshal([]byte(out), &cj); err != nil || code != exitFailure || cj.OK || cj.Duplicates != 1 {
		t.Fatalf("topics dup: exit %d %v\n%s", code, err, out)
	}
	if code, out, _ := runCLI(tp(good, bad)...); code != exitFailure || !strings.Contains(out, "lost") {
		t.Fatalf("topics lost: exit %d\n%s", code, out)
	}

	// Not found, usage errors.
	if code, _, errOut := runCLI(tp(good, kafkatest.UniqueName(t, "absent"))...); code != exitNotFound || !strings.Contains(errOut, "topic not found") {
		t.Fatalf("absent topic: exit %d %s", code, errOut)
	}
	props := filepath.Join(t.TempDir(), "c.properties")
	if err := os.WriteFile(props, []byte("socket.timeout.ms=30000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(dg(good, "--command-config", props)...); code != exitOK {
		t.Fatalf("--command-config: exit %d %s", code, errOut)
	}
	for _, args := range [][]string{
		{"verify", "topics", "--bootstrap-server", bs, "--source", good},
		{"verify", "topics", "--bootstrap-server", bs, "--source", good, "--target", good, "--mapping", "shuffle"},
		{"verify", "topics", "--bootstrap-server", bs, "--source", good, "--target", good, "extra"},
		{"verify", "datagen", "--bootstrap-server", bs, "--topic", good},
		{"verify", "datagen", "--bootstrap-server", bs, "--topic", good, "--tasks", "1", "--output", "yaml"},
		{"verify", "datagen", "--bootstrap-server", bs, "--topic", good, "--tasks", "1", "--cardinality", "0"},
		{"verify", "datagen", "--bootstrap-server", "", "--topic", good, "--tasks", "1"},
		{"verify", "datagen", "--bootstrap-server", bs, "--topic", good, "--tasks", "1", "--command-config", "/nonexistent/x.properties"},
	} {
		if code, _, errOut := runCLI(args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, errOut)
		}
	}
}
