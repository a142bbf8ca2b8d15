package aerofake

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"
)

// nPartitions is the fixed Aerospike partition count.
const nPartitions = 4096

// partitionID maps a digest to its partition, as client and server do.
func partitionID(d *[20]byte) int {
	return (int(d[0]) | int(d[1])<<8) & (nPartitions - 1)
}

// bin is one named value. data is the particle's wire encoding and is never
// modified after the bin is stored, so records can share it.
type bin struct {
	name  string
	ptype byte
	data  []byte
}

// record is an immutable snapshot of a stored record: a write builds a new
// record and swaps the pointer under the partition lock, so readers and scans
// can use a record after releasing the lock.
type record struct {
	set      string
	key      []byte // KEY field payload (particle type + value) when the client sent it
	bins     []bin
	gen      uint16
	voidTime uint32 // seconds since the citrusleaf epoch; 0 = never expires
	lut      int64  // last-update time, Unix nanoseconds
	inline   [2]bin // backing store for small bin sets
}

func (r *record) bin(name []byte) (int, bool) {
	for i := range r.bins {
		if r.bins[i].name == string(name) {
			return i, true
		}
	}
	return -1, false
}

func (r *record) expired(now uint32) bool {
	return r.voidTime != 0 && r.voidTime <= now
}

// size is the record's stored size as CE 8.1 checks it against
// max-record-size: the flat record (as_flat_record_size, storage/flat.c)
// plus the 4-byte end mark (buffer_bins, storage/drv_mem.c).
func (r *record) size() int {
	const (
		flatHeader = 35 // as_flat_record
		endMark    = 4
	)
	n := flatHeader + endMark
	if r.voidTime != 0 {
		n += 4
	}
	if r.set != "" {
		n += 1 + len(r.set)
	}
	if r.key != nil {
		n += uintvarSize(len(r.key)) + len(r.key)
	}
	if len(r.bins) > 0 {
		n += uintvarSize(len(r.bins))
	}
	for i := range r.bins {
		n += 1 + len(r.bins[i].name) + flatParticleSize(&r.bins[i])
	}
	return n
}

// flatParticleSize is a bin value's stored size, particle type byte
// included (the particles' flat_size functions).
func flatParticleSize(b *bin) int {
	switch {
	case b.ptype == ptInteger && len(b.data) == 8:
		u := binary.BigEndian.Uint64(b.data)
		switch {
		case u>>32 != 0:
			return 2 + 8
		case u>>16 != 0:
			return 2 + 4
		case u>>8 != 0:
			return 2 + 2
		}
		return 2 + 1
	case b.ptype == ptFloat:
		return 1 + 8
	case b.ptype == ptBool:
		return 1 + 1
	}
	return 1 + 4 + len(b.data) // blob_flat: type, u32 size, data
}

// uintvarSize is the length of v as the server's uintvar (7 bits a byte).
func uintvarSize(v int) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

type partition struct {
	mu   sync.Mutex
	recs map[[20]byte]*record
	// n mirrors len(recs) so whole-namespace walks can skip empty
	// partitions without taking their locks.
	n atomic.Int32
}

// namespace holds one configured namespace's records.
type namespace struct {
	cfg   NamespaceConfig
	parts [nPartitions]partition
}

// newNamespace returns an empty namespace. Partition maps are created on
// first write, so an idle server (or a fuzz iteration) stays cheap.
func newNamespace(cfg NamespaceConfig) *namespace {
	return &namespace{cfg: cfg}
}

// store puts r under d. The caller holds p.mu.
func (p *partition) store(d *[20]byte, r *record) {
	if p.recs == nil {
		p.recs = make(map[[20]byte]*record)
	}
	p.recs[*d] = r
	p.n.Store(int32(len(p.recs)))
}

// remove deletes d. The caller holds p.mu.
func (p *partition) remove(d *[20]byte) {
	delete(p.recs, *d)
	p.n.Store(int32(len(p.recs)))
}

func (p *partition) empty() bool { return p.n.Load() == 0 }

// lookup returns the live record for digest, removing it if it expired. The
// caller holds p.mu.
func (p *partition) lookup(d *[20]byte, now uint32) *record {
	r := p.recs[*d]
	if r != nil && r.expired(now) {
		p.remove(d)
		return nil
	}
	return r
}

// snapshot returns the live records of one partition matching set (all when
// set is nil), ordered by digest.
func (p *partition) snapshot(set []byte, now uint32, buf []digestRecord) []digestRecord {
	if p.empty() {
		return buf
	}
	p.mu.Lock()
	for d, r := range p.recs {
		if r.expired(now) {
			p.remove(&d)
			continue
		}
		if set != nil && r.set != string(set) {
			continue
		}
		buf = append(buf, digestRecord{digest: d, rec: r})
	}
	p.mu.Unlock()
	slices.SortFunc(buf, func(a, b digestRecord) int { return bytes.Compare(a.digest[:], b.digest[:]) })
	return buf
}

type digestRecord struct {
	digest [20]byte
	rec    *record
}

// count returns the number of live records in set ("" and all=true for the
// whole namespace).
func (ns *namespace) count(set string, all bool, now uint32) int {
	n := 0
	for i := range ns.parts {
		p := &ns.parts[i]
		if p.empty() {
			continue
		}
		p.mu.Lock()
		for _, r := range p.recs {
			if r.expired(now) {
				continue
			}
			if all || r.set == set {
				n++
			}
		}
		p.mu.Unlock()
	}
	return n
}

// truncate removes records of set (or all records when all is true) whose
// last-update time is at or before lut.
func (ns *namespace) truncate(set string, all bool, lut int64) int {
	n := 0
	for i := range ns.parts {
		p := &ns.parts[i]
		if p.empty() {
			continue
		}
		p.mu.Lock()
		for d, r := range p.recs {
			if (all || r.set == set) && r.lut <= lut {
				p.remove(&d)
				n++
			}
		}
		p.mu.Unlock()
	}
	return n
}

// nextGeneration is the server's generation step: uint16, wrapping 65535 to
// 1 so 0 is never a live record's generation.
func nextGeneration(g uint16) uint16 {
	if g == 0xFFFF {
		return 1
	}
	return g + 1
}
