package datagen

import "strconv"

// CounterRecord is one record of the counter quickstart.
type CounterRecord struct {
	Key    string
	Amount int64 // 1..100
	Seq    int64
}

// mix is splitmix64's finalizer: a fixed, well-distributed function of
// (seed, seq, stream), so contents never depend on timing or task count.
func mix(seed, seq int64, stream uint64) uint64 {
	z := uint64(seed) ^ (uint64(seq) * 0x9e3779b97f4a7c15) ^ (stream * 0xbf58476d1ce4e5b9)
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// CounterAt returns the counter record with sequence number seq.
func CounterAt(seed int64, cardinality int, seq int64) CounterRecord {
	k := mix(seed, seq, 1) % uint64(max(cardinality, 1))
	return CounterRecord{
		Key:    "k" + strconv.FormatUint(k, 10),
		Amount: int64(mix(seed, seq, 2)%100) + 1,
		Seq:    seq,
	}
}

// TaskSeqs returns the sequence numbers task index of count produces when
// it runs to the end of iterations (iterations > 0).
func TaskSeqs(index, count int, iterations int64) []int64 {
	out := make([]int64, 0, iterations)
	for i := int64(0); i < iterations; i++ {
		out = append(out, int64(index)+i*int64(count))
	}
	return out
}

// ExpectedSums returns, for a counter connector with tasks tasks each
// running iterations records, the sum of amounts per key and the number
// of records per key.
func ExpectedSums(seed int64, cardinality, tasks int, iterations int64) (sums, counts map[string]int64) {
	sums, counts = map[string]int64{}, map[string]int64{}
	for t := range tasks {
		for _, seq := range TaskSeqs(t, tasks, iterations) {
			r := CounterAt(seed, cardinality, seq)
			sums[r.Key] += r.Amount
			counts[r.Key]++
		}
	}
	return sums, counts
}

// Pageview is one record of the pageviews quickstart.
type Pageview struct {
	ViewTime int64 // milliseconds, increasing with seq
	UserID   string
	PageID   string
}

// PageviewAt returns the pageview with sequence number seq.
func PageviewAt(seed int64, users int, seq int64) Pageview {
	const epoch = 1_700_000_000_000
	return Pageview{
		ViewTime: epoch + seq*10 + int64(mix(seed, seq, 3)%10),
		UserID:   "User_" + strconv.FormatUint(mix(seed, seq, 4)%uint64(max(users, 1)), 10),
		PageID:   "Page_" + strconv.FormatUint(mix(seed, seq, 5)%100, 10),
	}
}
