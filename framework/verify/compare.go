package verify

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"sort"
)

// Mapping is how target partitions relate to source partitions.
type Mapping string

const (
	// MappingPreserve: a record of source partition p must be in target
	// partition p (KafkaReplicationSource's partition.mapping=preserve).
	MappingPreserve Mapping = "preserve"
	// MappingAny: records may be in any target partition, but records of
	// one source partition that share a target partition keep their order.
	MappingAny Mapping = "any"
)

// CompareOptions configure CompareTopics.
type CompareOptions struct {
	Source, Target ReadOptions // Target.Bootstrap empty = Source's
	Mapping        Mapping     // default MappingPreserve
	// MaxExamples bounds the examples listed per kind of violation
	// (default 10).
	MaxExamples int
}

// PartitionCounts are per-partition figures of a comparison.
type PartitionCounts struct {
	Partition     int32 `json:"partition"`
	SourceRecords int64 `json:"source_records"`
	TargetRecords int64 `json:"target_records"`
}

// CompareReport is the outcome of CompareTopics.
type CompareReport struct {
	Source  string  `json:"source"`
	Target  string  `json:"target"`
	Mapping Mapping `json:"mapping"`
	// SourceRecords and TargetRecords are the records read from each.
	SourceRecords int64 `json:"source_records"`
	TargetRecords int64 `json:"target_records"`
	// Copied is the number of source records found in the target (each
	// counted once).
	Copied int64 `json:"copied"`
	// Duplicates are target records beyond the first copy of a source
	// record.
	Duplicates int64 `json:"duplicates"`
	// Lost are source records missing from the target although a later
	// record of their partition was copied.
	Lost int64 `json:"lost"`
	// Pending are source records missing at the tail of their partition:
	// not copied yet (a lagging pipeline) or lost at the very end.
	Pending int64 `json:"pending"`
	// Unexpected are target records that match no source record.
	Unexpected int64 `json:"unexpected"`
	// Reordered are target records that come before a record that
	// preceded them in their source partition.
	Reordered int64 `json:"reordered"`
	// Moved are records found in another partition than their source
	// partition (MappingPreserve only).
	Moved      int64             `json:"moved"`
	Partitions []PartitionCounts `json:"partitions"`
	// Examples describe the first violations of each kind.
	Examples []string `json:"examples,omitempty"`
}

// OK reports whether the target holds the source exactly once, in order;
// allowPending tolerates a missing tail (a pipeline still running).
func (r *CompareReport) OK(allowPending bool) bool {
	return r.Duplicates == 0 && r.Lost == 0 && r.Unexpected == 0 && r.Reordered == 0 && r.Moved == 0 &&
		(allowPending || r.Pending == 0)
}

// occurrence is one source record, by partition and index in it.
type occurrence struct {
	partition int32
	index     int32
}

// occurrences maps content hashes to where they occur in the source.
type occurrences struct {
	first map[uint64]occurrence
	more  map[uint64][]occurrence // second and later occurrences
}

func (o *occurrences) add(k uint64, x occurrence) {
	if _, ok := o.first[k]; !ok {
		o.first[k] = x
		return
	}
	o.more[k] = append(o.more[k], x)
}

func (o *occurrences) count(k uint64) int {
	if _, ok := o.first[k]; !ok {
		return 0
	}
	return 1 + len(o.more[k])
}

func (o *occurrences) at(k uint64, i int) occurrence {
	if i == 0 {
		return o.first[k]
	}
	return o.more[k][i-1]
}

// hasher hashes record contents: key, value, headers, with null and empty
// told apart.
type hasher struct{ seed maphash.Seed }

func (h hasher) sum(r *Record) uint64 {
	var m maphash.Hash
	m.SetSeed(h.seed)
	var n [9]byte
	field := func(b []byte) {
		if b == nil {
			n[0] = 0
			m.Write(n[:1])
			return
		}
		n[0] = 1
		binary.LittleEndian.PutUint64(n[1:], uint64(len(b)))
		m.Write(n[:])
		m.Write(b)
	}
	field(r.Key)
	field(r.Value)
	binary.LittleEndian.PutUint64(n[1:], uint64(len(r.Headers)))
	n[0] = 2
	m.Write(n[:])
	for _, hd := range r.Headers {
		field([]byte(hd.Key))
		field(hd.Value)
	}
	return m.Sum64()
}

// CompareTopics reads source and target and reports how the target's
// records relate to the source's. Records are matched by content (key,
// value, headers); identical records in one source partition are matched
// in order.
func CompareTopics(ctx context.Context, source, target string, opts CompareOptions) (*CompareReport, error) {
	if opts.Mapping == "" {
		opts.Mapping = MappingPreserve
	}
	if opts.Mapping != MappingPreserve && opts.Mapping != MappingAny {
		return nil, fmt.Errorf("verify: unknown partition mapping %q (want preserve or any)", opts.Mapping)
	}
	if opts.MaxExamples <= 0 {
		opts.MaxExamples = 10
	}
	if opts.Target.Bootstrap == "" {
		opts.Target = opts.Source
	}
	h := hasher{seed: maphash.MakeSeed()}
	rep := &CompareReport{Source: source, Target: target, Mapping: opts.Mapping}
	ex := Examples{Max: opts.MaxExamples}

	// Source: every record's hash → its occurrences, in offset order. Most
	// contents occur once; repeats go to a side map to keep the main one
	// small.
	occ := occurrences{first: map[uint64]occurrence{}, more: map[uint64][]occurrence{}}
	srcLen := map[int32]int32{}
	srcOffsets := map[int32][]int64{} // index → offset, for examples
	if _, err := ReadTopic(ctx, opts.Source, source, func(r *Record) {
		k := h.sum(r)
		occ.add(k, occurrence{partition: r.Partition, index: srcLen[r.Partition]})
		srcLen[r.Partition]++
		srcOffsets[r.Partition] = append(srcOffsets[r.Partition], r.Offset)
		rep.SourceRecords++
	}); err != nil {
		return nil, err
	}

	// Target: match each record to its source occurrence.
	copied := map[int32][]bool{}
	for p, n := range srcLen {
		copied[p] = make([]bool, n)
	}
	next := map[uint64]int{} // how many occurrences of a repeated hash are consumed
	type pair struct{ target, source int32 }
	last := map[pair]int32{} // highest source index seen per (target partition, source partition)
	tgtLen := map[int32]int64{}
	if _, err := ReadTopic(ctx, opts.Target, target, func(r *Record) {
		rep.TargetRecords++
		tgtLen[r.Partition]++
		k := h.sum(r)
		n := occ.count(k)
		var i int
		if n == 1 {
			// The common case needs no counter: the copied flag says it.
			if f := occ.first[k]; copied[f.partition][f.index] {
				i = 1
			}
		} else {
			i = next[k]
		}
		if n == 0 {
			rep.Unexpected++
			ex.Add("unexpected", "target %s-%d@%d matches no source record", target, r.Partition, r.Offset)
			return
		}
		if i >= n {
			rep.Duplicates++
			o := occ.at(k, n-1)
			ex.Add("duplicate", "target %s-%d@%d duplicates source %s-%d@%d", target, r.Partition, r.Offset, source, o.partition, srcOffsets[o.partition][o.index])
			return
		}
		o := occ.at(k, i)
		if n > 1 {
			next[k] = i + 1
		}
		copied[o.partition][o.index] = true
		rep.Copied++
		if opts.Mapping == MappingPreserve && o.partition != r.Partition {
			rep.Moved++
			ex.Add("moved", "source %s-%d@%d is in target partition %d", source, o.partition, srcOffsets[o.partition][o.index], r.Partition)
		}
		pk := pair{target: r.Partition, source: o.partition}
		if l, ok := last[pk]; ok && o.index < l {
			rep.Reordered++
			ex.Add("reordered", "target %s-%d@%d (source offset %d) comes after source offset %d", target, r.Partition, r.Offset,
				srcOffsets[o.partition][o.index], srcOffsets[o.partition][l])
		} else {
			last[pk] = o.index
		}
	}); err != nil {
		return nil, err
	}

	// Missing records: lost below the last copied one, pending above it.
	parts := map[int32]bool{}
	for p := range srcLen {
		parts[p] = true
	}
	for p := range tgtLen {
		parts[p] = true
	}
	for p, cs := range copied {
		lastCopied := -1
		for i := len(cs) - 1; i >= 0; i-- {
			if cs[i] {
				lastCopied = i
				break
			}
		}
		for i, ok := range cs {
			if ok {
				continue
			}
			if i < lastCopied {
				rep.Lost++
				ex.Add("lost", "source %s-%d@%d is missing from the target", source, p, srcOffsets[p][i])
			} else {
				rep.Pending++
				ex.Add("pending", "source %s-%d@%d is not in the target (tail of the partition)", source, p, srcOffsets[p][i])
			}
		}
	}
	for p := range parts {
		rep.Partitions = append(rep.Partitions, PartitionCounts{Partition: p, SourceRecords: int64(srcLen[p]), TargetRecords: tgtLen[p]})
	}
	sort.Slice(rep.Partitions, func(i, j int) bool { return rep.Partitions[i].Partition < rep.Partitions[j].Partition })
	rep.Examples = ex.List()
	return rep, nil
}

// Examples keeps the first Max messages of each kind of violation, for a
// report's examples. Checks of a connector's own output, built on
// ReadTopic in the connector's packages, use it too.
type Examples struct {
	Max   int
	count map[string]int
	out   []string
}

// Add records one example of kind unless Max of that kind are kept.
func (e *Examples) Add(kind, format string, args ...any) {
	if e.count == nil {
		e.count = map[string]int{}
	}
	if e.count[kind] >= e.Max {
		return
	}
	e.count[kind]++
	e.out = append(e.out, kind+": "+fmt.Sprintf(format, args...))
}

// List returns the examples kept, in the order they were added.
func (e *Examples) List() []string { return e.out }
