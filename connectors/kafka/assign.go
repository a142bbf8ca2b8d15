package kafka

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// topicPartition names one partition of a source topic.
type topicPartition struct {
	Topic     string
	Partition int32
}

func (tp topicPartition) String() string { return tp.Topic + ":" + strconv.Itoa(int(tp.Partition)) }

// allPartitions expands topic partition counts into a sorted partition list.
func allPartitions(counts map[string]int) []topicPartition {
	var out []topicPartition
	for t, n := range counts {
		for p := range n {
			out = append(out, topicPartition{t, int32(p)})
		}
	}
	slices.SortFunc(out, func(a, b topicPartition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// assign spreads partitions over at most maxTasks tasks, round-robin over
// the sorted list: every partition goes to exactly one task, task sizes
// differ by at most one, and a topic's partitions are spread over as many
// tasks as possible. It returns no groups when there are no partitions.
func assign(parts []topicPartition, maxTasks int) [][]topicPartition {
	n := min(maxTasks, len(parts))
	if n <= 0 {
		return nil
	}
	groups := make([][]topicPartition, n)
	for i, tp := range parts {
		groups[i%n] = append(groups[i%n], tp)
	}
	return groups
}

// encodePartitions renders partitions as "topic:p,topic:p". Kafka topic
// names cannot contain ':' or ',', so the form is unambiguous.
func encodePartitions(parts []topicPartition) string {
	var b strings.Builder
	for i, tp := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(tp.String())
	}
	return b.String()
}

func decodePartitions(s string) ([]topicPartition, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []topicPartition
	for _, item := range strings.Split(s, ",") {
		topic, ps, ok := strings.Cut(strings.TrimSpace(item), ":")
		p, err := strconv.ParseInt(ps, 10, 32)
		if !ok || topic == "" || err != nil || p < 0 {
			return nil, fmt.Errorf("malformed partition %q in %s (want topic:partition)", item, taskKeyPartitions)
		}
		out = append(out, topicPartition{topic, int32(p)})
	}
	return out, nil
}

// encodeCounts renders topic partition counts as "topic:n,topic:n" (sorted).
func encodeCounts(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for t := range counts {
		keys = append(keys, t)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, t := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(t + ":" + strconv.Itoa(counts[t]))
	}
	return b.String()
}

func decodeCounts(s string) (map[string]int, error) {
	out := map[string]int{}
	parts, err := decodePartitions(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", taskKeyTargetPartitions, err)
	}
	for _, tp := range parts {
		if tp.Partition < 1 {
			return nil, fmt.Errorf("%s: topic %s has %d partitions", taskKeyTargetPartitions, tp.Topic, tp.Partition)
		}
		out[tp.Topic] = int(tp.Partition)
	}
	return out, nil
}
