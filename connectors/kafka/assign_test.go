package kafka

import (
	"fmt"
	"slices"
	"testing"
)

func TestAssignEveryPartitionOnceAndEvenly(t *testing.T) {
	cases := []struct {
		counts   map[string]int
		maxTasks int
		tasks    int
	}{
		{map[string]int{"a": 6}, 6, 6},
		{map[string]int{"a": 6}, 4, 4},
		{map[string]int{"a": 6}, 10, 6},
		{map[string]int{"a": 6, "b": 6, "c": 1}, 4, 4},
		{map[string]int{"a": 1, "b": 1, "c": 1}, 2, 2},
		{map[string]int{}, 3, 0},
		{map[string]int{"a": 3}, 1, 1},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.counts, tc.maxTasks), func(t *testing.T) {
			all := allPartitions(tc.counts)
			groups := assign(all, tc.maxTasks)
			if len(groups) != tc.tasks {
				t.Fatalf("%d tasks, want %d", len(groups), tc.tasks)
			}
			seen := map[topicPartition]int{}
			sizes := []int{}
			for _, g := range groups {
				sizes = append(sizes, len(g))
				for _, tp := range g {
					seen[tp]++
				}
				// Round trip through the task config encoding.
				back, err := decodePartitions(encodePartitions(g))
				if err != nil || !slices.Equal(back, g) {
					t.Errorf("decode(encode(%v)) = %v, %v", g, back, err)
				}
			}
			for _, tp := range all {
				if seen[tp] != 1 {
					t.Errorf("partition %v owned by %d tasks", tp, seen[tp])
				}
			}
			if len(seen) != len(all) {
				t.Errorf("tasks own %d partitions, want %d", len(seen), len(all))
			}
			if len(sizes) > 0 && slices.Max(sizes)-slices.Min(sizes) > 1 {
				t.Errorf("uneven spread: %v", sizes)
			}
		})
	}
}

func TestAssignSpreadsATopicOverTasks(t *testing.T) {
	groups := assign(allPartitions(map[string]int{"a": 6, "b": 6}), 6)
	for i, g := range groups {
		topics := map[string]int{}
		for _, tp := range g {
			topics[tp.Topic]++
		}
		if topics["a"] != 1 || topics["b"] != 1 {
			t.Errorf("task %d owns %v, want one partition of each topic", i, g)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, s := range []string{"a", "a:x", ":1", "a:-1", "a:1,,b:2"} {
		if _, err := decodePartitions(s); err == nil {
			t.Errorf("decodePartitions(%q) accepted", s)
		}
	}
	if _, err := decodeCounts("a:0"); err == nil {
		t.Error("decodeCounts accepted a zero partition count")
	}
	m, err := decodeCounts(encodeCounts(map[string]int{"x.r": 3, "y": 12}))
	if err != nil || m["x.r"] != 3 || m["y"] != 12 || len(m) != 2 {
		t.Errorf("counts round trip = %v, %v", m, err)
	}
}

func TestMurmur2MatchesKafka(t *testing.T) {
	// Vectors from Kafka's UtilsTest.testMurmur2.
	cases := map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	}
	for in, want := range cases {
		if got := murmur2([]byte(in)); got != want {
			t.Errorf("murmur2(%q) = %d, want %d", in, got, want)
		}
	}
}
