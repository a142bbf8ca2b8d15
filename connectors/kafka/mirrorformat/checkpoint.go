package mirrorformat

import (
	"encoding/binary"
	"fmt"
)

// Checkpoint is a consumer group's committed position on the source
// (UpstreamOffset) translated to the target (DownstreamOffset), for a
// partition of the remote topic Topic (the name on the target cluster).
type Checkpoint struct {
	Group            string
	Topic            string
	Partition        int32
	UpstreamOffset   int64
	DownstreamOffset int64
	Metadata         string
}

// Key is MM2's Checkpoint key: {group: STRING, topic: STRING,
// partition: INT32}.
func (c Checkpoint) Key() ([]byte, error) {
	b := make([]byte, 0, 2+len(c.Group)+2+len(c.Topic)+4)
	b, err := appendString(b, c.Group)
	if err != nil {
		return nil, fmt.Errorf("checkpoint group: %w", err)
	}
	if b, err = appendString(b, c.Topic); err != nil {
		return nil, fmt.Errorf("checkpoint topic: %w", err)
	}
	return binary.BigEndian.AppendUint32(b, uint32(c.Partition)), nil
}

// Value is MM2's Checkpoint value: the header {version: INT16} then
// {upstreamOffset: INT64, offset: INT64, metadata: STRING}.
func (c Checkpoint) Value() ([]byte, error) {
	b := make([]byte, 0, 2+16+2+len(c.Metadata))
	b = binary.BigEndian.AppendUint16(b, uint16(Version))
	b = binary.BigEndian.AppendUint64(b, uint64(c.UpstreamOffset))
	b = binary.BigEndian.AppendUint64(b, uint64(c.DownstreamOffset))
	b, err := appendString(b, c.Metadata)
	if err != nil {
		return nil, fmt.Errorf("checkpoint metadata: %w", err)
	}
	return b, nil
}

// DecodeCheckpoint reads a record of a checkpoints topic.
func DecodeCheckpoint(key, value []byte) (Checkpoint, error) {
	var c Checkpoint
	k := reader{b: key}
	c.Group = k.string("group")
	c.Topic = k.string("topic")
	c.Partition = k.int32("partition")
	if err := k.done("checkpoint key"); err != nil {
		return Checkpoint{}, err
	}
	v := reader{b: value}
	v.version()
	c.UpstreamOffset = v.int64("upstreamOffset")
	c.DownstreamOffset = v.int64("offset")
	c.Metadata = v.string("metadata")
	if err := v.done("checkpoint value"); err != nil {
		return Checkpoint{}, err
	}
	return c, nil
}
