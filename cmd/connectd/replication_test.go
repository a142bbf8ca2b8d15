package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/connectors/kafka/mirrorformat"
	"github.com/connectd/connectd/internal/kafkatest"
)

func TestTranslateOffsets(t *testing.T) {
	b := kafkatest.B()
	bs := b.Bootstrap(t)
	alias := kafkatest.UniqueName(t, "src")
	topic := alias + ".checkpoints.internal"
	b.CreateTopic(t, topic, kafkatest.Config("cleanup.policy", "compact"))
	t.Cleanup(func() { b.DeleteTopics(t, topic) })
	p, err := ckafka.NewProducer(&ckafka.ConfigMap{"bootstrap.servers": bs, "go.delivery.reports": false})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cps := []mirrorformat.Checkpoint{
		{Group: "g", Topic: alias + ".orders", Partition: 1, UpstreamOffset: 10, DownstreamOffset: 8},
		{Group: "other", Topic: alias + ".orders", Partition: 0, UpstreamOffset: 99, DownstreamOffset: 98},
		{Group: "g", Topic: alias + ".orders", Partition: 0, UpstreamOffset: 5, DownstreamOffset: 4},
		{Group: "g", Topic: alias + ".orders", Partition: 1, UpstreamOffset: 20, DownstreamOffset: 17, Metadata: "m"}, // the latest wins
	}
	for _, cp := range cps {
		k, _ := cp.Key()
		v, _ := cp.Value()
		if err := p.Produce(&ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: 0}, Key: k, Value: v}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if p.Flush(10000) > 0 {
		t.Fatal("checkpoints not delivered")
	}

	var out, errb bytes.Buffer
	args := []string{"replication", "translate-offsets", "--group", "g", "--source-alias", alias, "--bootstrap", bs}
	if code := run(context.Background(), args, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], alias+".orders  0          4       5") || !strings.Contains(lines[2], "17") {
		t.Fatalf("table:\n%s", out.String())
	}

	out.Reset()
	if code := run(context.Background(), append(args, "-o", "json"), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rows []translatedOffset
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	want := []translatedOffset{{alias + ".orders", 0, 4, 5, ""}, {alias + ".orders", 1, 17, 20, "m"}}
	if len(rows) != 2 || rows[0] != want[0] || rows[1] != want[1] {
		t.Fatalf("json rows %+v, want %+v", rows, want)
	}

	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"replication", "translate-offsets", "--group", "none", "--source-alias", alias, "--bootstrap", bs}, exitNotFound, "no checkpoints of group"},
		{[]string{"replication", "translate-offsets", "--source-alias", alias, "--bootstrap", bs}, exitUsage, "--group is required"},
		{[]string{"replication", "translate-offsets", "--group", "g", "--source-alias", alias + "x", "--bootstrap", bs, "--timeout", "5s"}, exitFailure, "does not exist"},
		{[]string{"replication", "translate-offsets", "--group", "g", "--source-alias", alias, "--bootstrap", bs, "--policy", "Custom"}, exitUsage, "unknown replication policy"},
	}
	for _, c := range cases {
		out.Reset()
		errb.Reset()
		if code := run(context.Background(), c.args, &out, &errb); code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d (%s), want %d with %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}
