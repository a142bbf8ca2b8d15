package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/connectors/kafka/mirrorformat"
	"github.com/connectd/connectd/connectors/kafka/replpolicy"
)

// translatedOffset is one row of translate-offsets: where group should
// resume on the target for one remote partition.
type translatedOffset struct {
	Topic          string `json:"topic"`
	Partition      int32  `json:"partition"`
	Offset         int64  `json:"offset"`
	UpstreamOffset int64  `json:"upstreamOffset"`
	Metadata       string `json:"metadata"`
}

func replicationCommand() *command {
	var group, alias, bootstrap, policy, separator, output string
	var timeout time.Duration
	var props multiFlag
	return &command{
		name:    "replication",
		summary: "Cross-cluster replication tools (MirrorMaker 2 compatible)",
		children: []*command{{
			name:  "translate-offsets",
			usage: "--group G --source-alias A --bootstrap <target> [flags]",
			summary: "Print a consumer group's offsets on the target cluster, translated from the source cluster by " +
				"the checkpoints KafkaCheckpointSource (or MirrorMaker 2) wrote to <alias>.checkpoints.internal, like " +
				"MM2's RemoteClusterUtils.translateOffsets. Resume the group on the target at these offsets to fail over.",
			flags: func(fs *flag.FlagSet) {
				fs.StringVar(&group, "group", "", "consumer group (required)")
				fs.StringVar(&alias, "source-alias", "", "alias of the source cluster the group consumed on (required)")
				fs.StringVar(&bootstrap, "bootstrap", os.Getenv("CONNECTD_TARGET_BOOTSTRAP"), "bootstrap servers of the target cluster (env CONNECTD_TARGET_BOOTSTRAP)")
				fs.StringVar(&policy, "policy", replpolicy.DefaultClass, "replication.policy.class: DefaultReplicationPolicy or IdentityReplicationPolicy")
				fs.StringVar(&separator, "separator", replpolicy.DefaultSeparator, "replication.policy.separator")
				fs.StringVar(&output, "output", "table", "output format: table or json")
				fs.StringVar(&output, "o", "table", "shorthand for --output")
				fs.DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the target cluster")
				fs.Var(&props, "property", "librdkafka consumer property key=value for the target (security.protocol, sasl.*, ssl.*); repeatable")
			},
			run: func(ctx context.Context, env *cliEnv, fs *flag.FlagSet, args []string) error {
				if len(args) > 0 {
					return usageError("unexpected arguments %q", args)
				}
				switch {
				case group == "":
					return usageError("--group is required")
				case alias == "":
					return usageError("--source-alias is required")
				case bootstrap == "":
					return usageError("--bootstrap (the target cluster) is required")
				case output != "table" && output != "json":
					return usageError("--output must be table or json, not %q", output)
				}
				pol, err := replpolicy.New(policy, separator, alias)
				if err != nil {
					return usageError("--policy: %v", err)
				}
				ctx, cancel := context.WithTimeout(ctx, timeout)
				defer cancel()
				rows, err := translateOffsets(ctx, bootstrap, props, pol.CheckpointsTopic(alias), group)
				if err != nil {
					return &exitError{code: exitFailure, msg: err.Error()}
				}
				if output == "json" {
					if rows == nil {
						rows = []translatedOffset{}
					}
					return printJSON(env.stdout, rows)
				}
				if len(rows) == 0 {
					return &exitError{code: exitNotFound, msg: fmt.Sprintf("no checkpoints of group %q in %s", group, pol.CheckpointsTopic(alias))}
				}
				var table2 [][]string
				for _, r := range rows {
					table2 = append(table2, []string{r.Topic, strconv.Itoa(int(r.Partition)), strconv.FormatInt(r.Offset, 10), strconv.FormatInt(r.UpstreamOffset, 10)})
				}
				table(env.stdout, []string{"TOPIC", "PARTITION", "OFFSET", "UPSTREAM OFFSET"}, table2)
				return nil
			},
		}},
	}
}

// multiFlag collects repeated key=value flags.
type multiFlag map[string]string

func (m *multiFlag) String() string { return fmt.Sprint(map[string]string(*m)) }

func (m *multiFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.New("want key=value")
	}
	if *m == nil {
		*m = multiFlag{}
	}
	(*m)[k] = v
	return nil
}

// translateOffsets reads the checkpoints topic to its end (read_committed,
// as MM2's MirrorClient does) and keeps group's latest checkpoint per
// remote partition.
func translateOffsets(ctx context.Context, bootstrap string, props map[string]string, topic, group string) ([]translatedOffset, error) {
	cm := ckafka.ConfigMap{}
	for k, v := range props {
		cm[k] = v
	}
	cm["bootstrap.servers"] = bootstrap
	cm["group.id"] = "connectd-translate-offsets" // never joined nor committed
	cm["enable.auto.commit"] = false
	cm["isolation.level"] = "read_committed"
	cm["enable.partition.eof"] = true
	cm["log.connection.close"] = false
	c, err := ckafka.NewConsumer(&cm)
	if err != nil {
		return nil, fmt.Errorf("consumer for %s: %w", bootstrap, err)
	}
	defer c.Close()
	ms := 10000
	if dl, ok := ctx.Deadline(); ok {
		ms = max(1, int(time.Until(dl).Milliseconds()))
	}
	md, err := c.GetMetadata(&topic, false, ms)
	if err != nil {
		return nil, fmt.Errorf("reading %s on %s: %w", topic, bootstrap, err)
	}
	tm, ok := md.Topics[topic]
	if !ok || tm.Error.Code() == ckafka.ErrUnknownTopicOrPart || len(tm.Partitions) == 0 {
		return nil, fmt.Errorf("checkpoints topic %s does not exist on %s: is KafkaCheckpointSource running with this source alias?", topic, bootstrap)
	}
	var tps []ckafka.TopicPartition
	for _, p := range tm.Partitions {
		tps = append(tps, ckafka.TopicPartition{Topic: &topic, Partition: p.ID, Offset: ckafka.OffsetBeginning})
	}
	if err := c.Assign(tps); err != nil {
		return nil, fmt.Errorf("reading %s: %w", topic, err)
	}
	latest := map[[2]string]translatedOffset{}
	eof := map[int32]bool{}
	for len(eof) < len(tps) {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("reading %s on %s: %w", topic, bootstrap, ctx.Err())
		}
		switch e := c.Poll(100).(type) {
		case *ckafka.Message:
			delete(eof, e.TopicPartition.Partition)
			cp, err := mirrorformat.DecodeCheckpoint(e.Key, e.Value)
			if err != nil || cp.Group != group {
				continue
			}
			latest[[2]string{cp.Topic, strconv.Itoa(int(cp.Partition))}] = translatedOffset{
				Topic: cp.Topic, Partition: cp.Partition, Offset: cp.DownstreamOffset, UpstreamOffset: cp.UpstreamOffset, Metadata: cp.Metadata}
		case ckafka.PartitionEOF:
			eof[e.Partition] = true
		case ckafka.Error:
			if e.IsFatal() {
				return nil, fmt.Errorf("reading %s: %w", topic, e)
			}
		}
	}
	var rows []translatedOffset
	for _, r := range latest {
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b translatedOffset) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return rows, nil
}
