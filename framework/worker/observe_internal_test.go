package worker

import "testing"

// The sink lag gauge reads librdkafka's statistics: the largest
// consumer_lag over the task's own partitions, ignoring unknown (-1) lags
// and the internal partition -1.
func TestMaxConsumerLag(t *testing.T) {
	const stats = `{"name":"rdkafka#consumer-1","topics":{
		"a":{"topic":"a","partitions":{
			"0":{"partition":0,"consumer_lag":12},
			"1":{"partition":1,"consumer_lag":40},
			"-1":{"partition":-1,"consumer_lag":999}}},
		"b":{"topic":"b","partitions":{
			"0":{"partition":0,"consumer_lag":-1},
			"3":{"partition":3,"consumer_lag":7000}}}}}`
	for _, tc := range []struct {
		name     string
		assigned map[string][]int32
		lag      int64
		ok       bool
	}{
		{"all assigned", map[string][]int32{"a": {0, 1}, "b": {0, 3}}, 7000, true},
		{"largest not ours", map[string][]int32{"a": {0, 1}, "b": {0}}, 40, true},
		{"one partition", map[string][]int32{"a": {0}}, 12, true},
		{"only unknown lag", map[string][]int32{"b": {0}}, 0, false},
		{"nothing assigned", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lag, ok := maxConsumerLag(stats, func(topic string, p int32) bool {
				for _, q := range tc.assigned[topic] {
					if q == p {
						return true
					}
				}
				return false
			})
			if lag != tc.lag || ok != tc.ok {
				t.Fatalf("maxConsumerLag = %d, %v; want %d, %v", lag, ok, tc.lag, tc.ok)
			}
		})
	}
	if _, ok := maxConsumerLag("not json", func(string, int32) bool { return true }); ok {
		t.Fatal("lag from invalid statistics")
	}
}
