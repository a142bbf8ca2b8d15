package aerospike

import as "github.com/aerospike/aerospike-client-go/v7"

// fold is the combined effect of consecutive records on one Aerospike key,
// so that a batch writes each key once. Folding gives the same record and
// the same rejected records as applying the records one by one (a property
// test checks this against the test server), with two documented
// exceptions: float increments are summed before they are added, which can
// round differently in the last bits; and a record that would make the
// stored record too big is not rejected when a later record of the same
// run removes the bins that made it so. When a record cannot join the run
// without changing the outcome (see add and canIncrement), the run ends
// before it and the record goes into the next write.
type fold struct {
	mode string
	// deletes: tombstones delete the record, so a tombstone is a run of
	// its own (a delete carries no bins and no positions).
	deletes bool
	recs    []*mapped
	// one is the run's only record while it has one: most keys appear once
	// per batch, and their write is built straight from the record's bins
	// without the maps below.
	one *mapped
	// clear: the run starts from an empty record (replace mode, or a
	// tombstone in the run), so the write replaces the record's bins.
	clear bool
	// sets holds bins written with a value (nil deletes the bin); incs holds
	// bins incremented by an int64 or float64 delta. A bin is in at most one.
	sets map[string]any
	incs map[string]any
	// order lists bin names in first-touch order, so ops are deterministic.
	order []string
	// pos holds, per source partition, the highest offset in the run.
	pos map[string]int64
	// nops counts the bin operations of a list or map mode run, whose
	// records each keep their own operations (see addCDT).
	nops int
}

// maxFoldOps bounds the operations of one list or map mode write: the
// wire format counts a command's operations in 16 bits, and one huge
// operate would hold the record's lock on the server for long.
const maxFoldOps = 4096

func newFold(mode string) *fold {
	return &fold{mode: mode, pos: make(map[string]int64, 1)}
}

// isClear reports whether the write replaces the record's bins.
func (f *fold) isClear() bool {
	if f.one != nil {
		return f.one.tombstone || f.mode == ModeReplace
	}
	return f.clear
}

// appendOps appends the write's bin operations: a put of the value (nil
// deletes the bin) or an add of the delta. Deleting is pointless when the
// write replaces the bins (clearing) or creates the record (absent), and
// an increment of a bin of an absent record is a put.
func (f *fold) appendOps(ops []*as.Operation, arena *opArena, mapPol *as.MapPolicy, clearing, absent bool) []*as.Operation {
	if cdtMode(f.mode) {
		for _, m := range f.recs {
			if !m.tombstone {
				ops = appendCDTOps(ops, arena, mapPol, f.mode, m, absent)
			}
		}
		return ops
	}
	op := func(name string, v any, inc bool) {
		switch {
		case inc && !absent:
			ops = append(ops, arena.add(*as.AddOp(as.NewBin(name, v))))
		case v == nil && (clearing || absent):
		default:
			ops = append(ops, arena.add(*as.PutOp(as.NewBin(name, v))))
		}
	}
	if m := f.one; m != nil {
		if m.tombstone {
			return ops
		}
		for _, b := range m.bins {
			switch {
			case b.value == nil && f.mode == ModeReplace:
			case f.mode == ModeIncrement && isNumber(b.value):
				op(b.name, b.value, true)
			default:
				op(b.name, b.value, false)
			}
		}
		return ops
	}
	for _, name := range f.order {
		if v, ok := f.sets[name]; ok {
			op(name, v, false)
		} else if v, ok := f.incs[name]; ok {
			op(name, v, true)
		}
	}
	return ops
}

func (f *fold) empty() bool { return len(f.recs) == 0 }

// isDelete reports whether the write deletes the record.
func (f *fold) isDelete() bool { return f.deletes && f.one != nil && f.one.tombstone }

func (f *fold) touch(name string) {
	_, s := f.sets[name]
	_, i := f.incs[name]
	if !s && !i {
		f.order = append(f.order, name)
	}
}

func (f *fold) reset() {
	f.clear = true
	clear(f.sets)
	clear(f.incs)
	f.order = f.order[:0]
}

// add folds m onto the run. It reports false, leaving the fold unchanged,
// when m cannot be combined with what the run already holds.
func (f *fold) add(m *mapped) bool {
	if f.deletes && len(f.recs) > 0 && (m.tombstone || f.recs[0].tombstone) {
		return false
	}
	if cdtMode(f.mode) {
		return f.addCDT(m)
	}
	if len(f.recs) == 0 {
		f.one = m
		f.accept(m)
		return true
	}
	if f.one != nil {
		// A second record joins: move the first into the maps.
		first := f.one
		f.one = nil
		f.sets, f.incs = map[string]any{}, map[string]any{}
		f.merge(first)
	}
	if !f.merge(m) {
		return false
	}
	f.accept(m)
	return true
}

// merge combines m with the run's maps, or reports false (changing
// nothing) when it cannot.
func (f *fold) merge(m *mapped) bool {
	mode := f.mode
	if m.tombstone {
		if len(f.incs) > 0 {
			// Replacing the record would hide whether the run's increments
			// of stored bins are valid (see canIncrement).
			return false
		}
		f.reset()
		return true
	}
	switch mode {
	case ModeReplace:
		f.reset()
		for _, b := range m.bins {
			if b.value == nil {
				continue // a replace writes only present fields
			}
			f.touch(b.name)
			f.sets[b.name] = b.value
		}
	case ModeUpdate:
		for _, b := range m.bins {
			f.touch(b.name)
			f.sets[b.name] = b.value
		}
	case ModeIncrement:
		if !f.canIncrement(m) {
			return false
		}
		for _, b := range m.bins {
			f.touch(b.name)
			if !isNumber(b.value) {
				delete(f.incs, b.name)
				f.sets[b.name] = b.value
				continue
			}
			if cur, ok := f.sets[b.name]; ok {
				// The run already gave the bin a value (or deleted it):
				// the increment applies to that value.
				f.sets[b.name] = addNumbers(cur, b.value)
			} else if f.clear {
				f.sets[b.name] = b.value // an increment of a missing bin sets it
			} else if cur, ok := f.incs[b.name]; ok {
				f.incs[b.name] = addNumbers(cur, b.value)
			} else {
				f.incs[b.name] = b.value
			}
		}
	}
	return true
}

// canIncrement reports whether m can join the run without changing the
// outcome compared with applying it alone. The server refuses an increment
// of a bin holding another type (a string, or a float for an integer
// delta), and refuses the whole record. So a numeric field must match the
// kind of the value the run gives its bin, and no field may overwrite a
// bin the run increments: that increment targets the stored value, whose
// type only the server knows, and overwriting it would hide a refusal.
func (f *fold) canIncrement(m *mapped) bool {
	for _, b := range m.bins {
		cur, isSet := f.sets[b.name]
		inc, isInc := f.incs[b.name]
		switch {
		case !isNumber(b.value):
			if isInc {
				return false
			}
		case isSet:
			if cur != nil && !sameNumberKind(cur, b.value) {
				return false
			}
		case isInc:
			if !sameNumberKind(inc, b.value) {
				return false
			}
		}
	}
	return true
}

func (f *fold) accept(m *mapped) {
	f.recs = append(f.recs, m)
	if cur, ok := f.pos[m.pos]; !ok || m.offset > cur {
		f.pos[m.pos] = m.offset
	}
}

func isNumber(v any) bool {
	switch v.(type) {
	case int64, float64:
		return true
	}
	return false
}

func sameNumberKind(a, b any) bool {
	switch a.(type) {
	case int64:
		_, ok := b.(int64)
		return ok
	case float64:
		_, ok := b.(float64)
		return ok
	}
	return false
}

// addNumbers adds two numbers of the same kind; a nil a (a deleted bin)
// counts as missing, so the result is b. Integer addition wraps as the
// server's does.
func addNumbers(a, b any) any {
	switch x := a.(type) {
	case int64:
		return x + b.(int64)
	case float64:
		return x + b.(float64)
	}
	return b
}

// addCDT is add for the list and map modes. Their records are not merged:
// each keeps its operations, in order, in the one write, so the write has
// the effect of the records applied one by one, and a refusal by the
// server (a bin of another type) refuses the whole write, after which the
// writer applies the records singly to find the culprit. A tombstone is
// written alone, neither folded onto records nor they onto it.
func (f *fold) addCDT(m *mapped) bool {
	if len(f.recs) > 0 {
		if m.tombstone || f.recs[0].tombstone || f.nops+len(m.bins) > maxFoldOps {
			return false
		}
		f.one = nil
	} else {
		f.one = m
	}
	f.nops += len(m.bins)
	f.accept(m)
	return true
}

// appendCDTOps appends the list or map operations of one record. A null
// field (map modes) removes the map entry; there is nothing to remove from
// a record that does not exist yet.
func appendCDTOps(ops []*as.Operation, arena *opArena, mapPol *as.MapPolicy, mode string, m *mapped, absent bool) []*as.Operation {
	for _, b := range m.bins {
		switch {
		case mode == ModeListAppend:
			if l, ok := b.value.([]any); ok {
				if len(l) > 0 {
					// One element appends it; several append them as items.
					ops = append(ops, arena.add(*as.ListAppendOp(b.name, l...)))
				}
				continue
			}
			ops = append(ops, arena.add(*as.ListAppendOp(b.name, b.value)))
		case b.value == nil:
			if !absent {
				ops = append(ops, arena.add(*as.MapRemoveByKeyOp(b.name, m.mapKey, as.MapReturnType.NONE)))
			}
		case mode == ModeMapIncrement && isNumber(b.value):
			ops = append(ops, arena.add(*as.MapIncrementOp(mapPol, b.name, m.mapKey, b.value)))
		default:
			ops = append(ops, arena.add(*as.MapPutOp(mapPol, b.name, m.mapKey, b.value)))
		}
	}
	return ops
}
