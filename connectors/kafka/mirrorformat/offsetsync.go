package mirrorformat

import (
	"encoding/binary"
	"fmt"
)

// OffsetSync says that the record at UpstreamOffset of a source partition
// was copied to DownstreamOffset of its remote partition on the target.
// Topic is the source topic's name (MM2 keys syncs by the upstream
// partition).
type OffsetSync struct {
	Topic            string
	Partition        int32
	UpstreamOffset   int64
	DownstreamOffset int64
}

// Key is MM2's OffsetSync key: {topic: STRING, partition: INT32}.
func (s OffsetSync) Key() ([]byte, error) {
	b, err := appendString(make([]byte, 0, 2+len(s.Topic)+4), s.Topic)
	if err != nil {
		return nil, fmt.Errorf("offset sync topic: %w", err)
	}
	return binary.BigEndian.AppendUint32(b, uint32(s.Partition)), nil
}

// Value is MM2's OffsetSync value: {upstreamOffset: INT64, offset: INT64},
// without a version header.
func (s OffsetSync) Value() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(s.UpstreamOffset))
	return binary.BigEndian.AppendUint64(b, uint64(s.DownstreamOffset))
}

// DecodeOffsetSync reads a record of an offset-syncs topic.
func DecodeOffsetSync(key, value []byte) (OffsetSync, error) {
	var s OffsetSync
	k := reader{b: key}
	s.Topic = k.string("topic")
	s.Partition = k.int32("partition")
	if err := k.done("offset sync key"); err != nil {
		return OffsetSync{}, err
	}
	v := reader{b: value}
	s.UpstreamOffset = v.int64("upstreamOffset")
	s.DownstreamOffset = v.int64("offset")
	if err := v.done("offset sync value"); err != nil {
		return OffsetSync{}, err
	}
	return s, nil
}
