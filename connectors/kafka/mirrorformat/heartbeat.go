package mirrorformat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// HeartbeatVersion is the value-format version MirrorMaker 2 4.1.1 writes
// (Heartbeat.VERSION).
const HeartbeatVersion int16 = 0

// Field names of MM2's heartbeat key and source partition.
const (
	HeartbeatSourceClusterAliasKey = "sourceClusterAlias"
	HeartbeatTargetClusterAliasKey = "targetClusterAlias"
)

// Heartbeat is MirrorMaker 2's heartbeat record
// (org.apache.kafka.connect.mirror.Heartbeat): a beat emitted for the
// replication flow SourceClusterAlias→TargetClusterAlias at Timestamp.
//
// Its key is the Kafka-protocol struct {sourceClusterAlias STRING,
// targetClusterAlias STRING}; its value is the header struct {version INT16}
// followed by the version-0 struct {timestamp INT64}. STRING is a big-endian
// int16 byte length and UTF-8 bytes, integers are big-endian. The record
// key keeps one record per flow in the compacted heartbeats topic.
type Heartbeat struct {
	SourceClusterAlias string
	TargetClusterAlias string
	// Timestamp is milliseconds since the Unix epoch.
	Timestamp int64
}

// ErrHeartbeatFormat is wrapped by every decoding error.
var ErrHeartbeatFormat = errors.New("not an MM2 heartbeat")

// Time is the heartbeat's timestamp.
func (h Heartbeat) Time() time.Time { return time.UnixMilli(h.Timestamp) }

// Key encodes the key as MM2's Heartbeat.recordKey does. An alias
// longer than 32767 bytes cannot be encoded (Kafka's STRING limit).
func (h Heartbeat) Key() ([]byte, error) {
	for _, s := range []string{h.SourceClusterAlias, h.TargetClusterAlias} {
		if len(s) > math.MaxInt16 {
			return nil, fmt.Errorf("heartbeat key: cluster alias of %d bytes exceeds the %d-byte limit", len(s), math.MaxInt16)
		}
	}
	b := make([]byte, 0, 4+len(h.SourceClusterAlias)+len(h.TargetClusterAlias))
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.SourceClusterAlias)))
	b = append(b, h.SourceClusterAlias...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.TargetClusterAlias)))
	b = append(b, h.TargetClusterAlias...)
	return b, nil
}

// Value encodes the value as MM2's Heartbeat.recordValue does:
// version 0 header, then the timestamp.
func (h Heartbeat) Value() []byte {
	b := make([]byte, 0, 10)
	b = binary.BigEndian.AppendUint16(b, uint16(HeartbeatVersion))
	return binary.BigEndian.AppendUint64(b, uint64(h.Timestamp))
}

// SourcePartition is the source partition MM2's heartbeat task gives its
// records ({sourceClusterAlias, targetClusterAlias}); their source offset
// is always {"offset": 0}.
func (h Heartbeat) SourcePartition() map[string]any {
	return map[string]any{
		HeartbeatSourceClusterAliasKey: h.SourceClusterAlias,
		HeartbeatTargetClusterAliasKey: h.TargetClusterAlias,
	}
}

// DecodeHeartbeat reads a heartbeat record's key and value. It is stricter
// than MM2's Heartbeat.deserializeRecord, which ignores trailing bytes and
// (its version check being a Java assert) reads any version with version
// 0's layout: a value of another version, a truncated field or trailing
// bytes are errors here, so that a record of another format is never taken
// for a heartbeat.
func DecodeHeartbeat(key, value []byte) (Heartbeat, error) {
	var h Heartbeat
	rest := key
	for _, f := range []struct {
		name string
		dst  *string
	}{{HeartbeatSourceClusterAliasKey, &h.SourceClusterAlias}, {HeartbeatTargetClusterAliasKey, &h.TargetClusterAlias}} {
		if len(rest) < 2 {
			return Heartbeat{}, fmt.Errorf("%w: key ends before the length of %s", ErrHeartbeatFormat, f.name)
		}
		n := int16(binary.BigEndian.Uint16(rest))
		rest = rest[2:]
		if n < 0 || int(n) > len(rest) {
			return Heartbeat{}, fmt.Errorf("%w: key field %s has length %d with %d bytes left", ErrHeartbeatFormat, f.name, n, len(rest))
		}
		*f.dst = string(rest[:n])
		rest = rest[n:]
	}
	if len(rest) != 0 {
		return Heartbeat{}, fmt.Errorf("%w: %d bytes after the key's fields", ErrHeartbeatFormat, len(rest))
	}
	if len(value) != 10 {
		return Heartbeat{}, fmt.Errorf("%w: value has %d bytes, want 10 (version, timestamp)", ErrHeartbeatFormat, len(value))
	}
	if v := int16(binary.BigEndian.Uint16(value)); v != HeartbeatVersion {
		return Heartbeat{}, fmt.Errorf("%w: value version %d, want %d", ErrHeartbeatFormat, v, HeartbeatVersion)
	}
	h.Timestamp = int64(binary.BigEndian.Uint64(value[2:]))
	return h, nil
}
