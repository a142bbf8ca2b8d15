package kafka

// murmur2 is Kafka's murmur2 hash (org.apache.kafka.common.utils.Utils),
// the hash of the Java producer's default partitioner and of librdkafka's
// "murmur2" partitioner. key-hash mapping uses it so that a record lands on
// the partition a Java producer would have chosen for its key.
func murmur2(data []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	n := len(data)
	h := seed ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := data[n&^3:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// keyHashPartition returns the target partition for key-hash mapping:
// Kafka's default partitioner for non-null keys; a null key keeps its
// source partition number modulo the target's count, which keeps the
// order of a source partition's keyless records.
func keyHashPartition(key []byte, source int32, targetCount int) int32 {
	if key == nil {
		return source % int32(targetCount)
	}
	return (murmur2(key) & 0x7fffffff) % int32(targetCount)
}
