package aerofake

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/aerospike/aerospike-client-go/v7/pkg/ripemd160"
)

// Record is a copy of a stored record, for tests that check server state
// directly instead of through a client.
type Record struct {
	Namespace string
	Set       string
	Digest    [20]byte
	// Key is the user key when the client sent it (SendKey): int64, string
	// or []byte. nil otherwise.
	Key any
	// Bins holds decoded values: nil, bool, int64, float64, string, []byte,
	// []any and map[any]any (keys int64, string or BlobKey).
	Bins       map[string]any
	Generation uint16
	// VoidTime is the expiry in seconds since 2010-01-01 UTC; 0 = never.
	VoidTime   uint32
	LastUpdate time.Time
}

// Expiration returns when the record expires, or the zero time if never.
func (r Record) Expiration() time.Time {
	if r.VoidTime == 0 {
		return time.Time{}
	}
	return time.Unix(int64(r.VoidTime)+citrusleafEpoch, 0)
}

// Digest computes a key's digest as the client does: RIPEMD-160 over the set
// name, the key's particle type and the key bytes. key may be any Go integer
// type, a string or a []byte.
func Digest(set string, key any) ([20]byte, error) {
	var out [20]byte
	var ktype byte
	var kb []byte
	switch k := key.(type) {
	case string:
		ktype, kb = ptString, []byte(k)
	case []byte:
		ktype, kb = ptBlob, k
	case int:
		ktype, kb = ptInteger, binary.BigEndian.AppendUint64(nil, uint64(k))
	case int8:
		ktype, kb = ptInteger, binary.BigEndian.AppendUint64(nil, uint64(k))
	case int16:
		ktype, kb = ptInteger, binary.BigEndian.AppendUint64(nil, uint64(k))
	case int32:
		ktype, kb = ptInteger, binary.BigEndian.AppendUint64(nil, uint64(k))
	case int64:
		ktype, kb = ptInteger, binary.BigEndian.AppendUint64(nil, uint64(k))
	case uint8:
		ktype, kb = ptInteger, binary.BigEndian.AppendUint64(nil, uint64(k))
	case uint16:
		ktype, kb = ptInteger, binary.BigEndian.AppendUint64(nil, uint64(k))
	case uint32:
		ktype, kb = ptInteger, binary.BigEndian.AppendUint64(nil, uint64(k))
	default:
		return out, fmt.Errorf("aerofake: unsupported key type %T", key)
	}
	h := ripemd160.New()
	h.Write([]byte(set))
	h.Write([]byte{ktype})
	h.Write(kb)
	copy(out[:], h.Sum(nil))
	return out, nil
}

// PartitionID returns the partition a digest belongs to.
func PartitionID(digest [20]byte) int { return partitionID(&digest) }

// Record returns a copy of the live record with the given digest.
func (s *Server) Record(ns string, digest [20]byte) (Record, bool) {
	n := s.namespaces[ns]
	if n == nil {
		return Record{}, false
	}
	p := &n.parts[partitionID(&digest)]
	p.mu.Lock()
	r := p.lookup(&digest, s.now().cl)
	p.mu.Unlock()
	if r == nil {
		return Record{}, false
	}
	return toRecord(ns, digest, r), true
}

// RecordByKey is Record for a user key in a set.
func (s *Server) RecordByKey(ns, set string, key any) (Record, bool, error) {
	d, err := Digest(set, key)
	if err != nil {
		return Record{}, false, err
	}
	r, ok := s.Record(ns, d)
	return r, ok, nil
}

// Records returns copies of the live records of a set ("" for every record
// of the namespace), ordered by partition and then digest.
func (s *Server) Records(ns, set string) []Record {
	n := s.namespaces[ns]
	if n == nil {
		return nil
	}
	var filter []byte
	if set != "" {
		filter = []byte(set)
	}
	now := s.now().cl
	var out []Record
	var buf []digestRecord
	for pid := range n.parts {
		buf = n.parts[pid].snapshot(filter, now, buf[:0])
		for _, dr := range buf {
			out = append(out, toRecord(ns, dr.digest, dr.rec))
		}
	}
	return out
}

// Count returns the number of live records in a set ("" for the whole
// namespace); -1 when the namespace does not exist.
func (s *Server) Count(ns, set string) int {
	n := s.namespaces[ns]
	if n == nil {
		return -1
	}
	return n.count(set, set == "", s.now().cl)
}

// Truncate removes every record of a set ("" for the whole namespace), as
// the truncate info command does.
func (s *Server) Truncate(ns, set string) error {
	n := s.namespaces[ns]
	if n == nil {
		return fmt.Errorf("aerofake: namespace %q not configured", ns)
	}
	n.truncate(set, set == "", math.MaxInt64)
	return nil
}

// SetGeneration overwrites a live record's generation, so tests can reach
// the uint16 wrap-around without 65535 writes.
func (s *Server) SetGeneration(ns string, digest [20]byte, gen uint16) error {
	n := s.namespaces[ns]
	if n == nil {
		return fmt.Errorf("aerofake: namespace %q not configured", ns)
	}
	if gen == 0 {
		return fmt.Errorf("aerofake: generation 0 is never a live record's generation")
	}
	p := &n.parts[partitionID(&digest)]
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.lookup(&digest, s.now().cl)
	if r == nil {
		return fmt.Errorf("aerofake: record %x not found in %q", digest, ns)
	}
	nr := *r
	nr.gen = gen
	p.store(&digest, &nr)
	return nil
}

func toRecord(ns string, d [20]byte, r *record) Record {
	out := Record{
		Namespace:  ns,
		Set:        r.set,
		Digest:     d,
		Bins:       make(map[string]any, len(r.bins)),
		Generation: r.gen,
		VoidTime:   r.voidTime,
		LastUpdate: time.Unix(0, r.lut),
	}
	if len(r.key) > 0 {
		out.Key = decodeParticle(r.key[0], r.key[1:])
	}
	for _, b := range r.bins {
		out.Bins[b.name] = decodeParticle(b.ptype, b.data)
	}
	return out
}

// decodeParticle turns a stored particle into a plain Go value.
func decodeParticle(ptype byte, data []byte) any {
	switch ptype {
	case ptNull:
		return nil
	case ptInteger:
		if len(data) == 8 {
			return int64(binary.BigEndian.Uint64(data))
		}
		return beInt(data)
	case ptFloat:
		if len(data) == 8 {
			return math.Float64frombits(binary.BigEndian.Uint64(data))
		}
	case ptString:
		return string(data)
	case ptBool:
		return len(data) == 1 && data[0] != 0
	case ptGeoJSON:
		if len(data) >= 3 {
			ncells := int(binary.BigEndian.Uint16(data[1:3]))
			if 3+ncells*8 <= len(data) {
				return string(data[3+ncells*8:])
			}
		}
	case ptMap, ptList:
		if v, _, err := mpDecode(data, 0); err == nil {
			return v
		}
	}
	return bytes.Clone(data)
}
