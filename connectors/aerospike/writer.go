package aerospike

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/aerospike/aerospike-client-go/v7/types"

	"github.com/connectd/connectd/framework/sdk"
)

// reporter receives records that cannot be written (the task context's
// ReportError).
type reporter func(rec *sdk.SinkRecord, err error)

// writer applies mapped records to Aerospike with the effectively-once
// protocol (or blindly when it is switched off). It is used by one task,
// from one goroutine at a time.
type writer struct {
	cfg     *Config
	client  *as.Client
	m       *sinkMetrics
	log     *slog.Logger
	report  reporter
	readPol *as.BatchPolicy
	// getPol reads positions with BatchGet, which reports a missing record
	// as nil instead of building an error (with a stack trace) per row.
	getPol *as.BatchPolicy
	// writePol is the parent policy of batch writes.
	writePol *as.BatchPolicy
	readBin  []string
	mapPol   *as.MapPolicy
	// sleep waits between attempts; tests may replace it.
	sleep func(ctx context.Context, d time.Duration) error
	// applied and skipped count the records of the current apply call
	// written and skipped as already applied (stats.set).
	applied, skipped int64
}

func newWriter(cfg *Config, client *as.Client, m *sinkMetrics, log *slog.Logger, report reporter) *writer {
	base := func() *as.BatchPolicy {
		p := as.NewBatchPolicy()
		p.TotalTimeout = cfg.TotalTimeout
		p.SocketTimeout = cfg.SocketTimeout
		p.MaxRetries = cfg.ClientRetries
		// Per-row failures must come back as row results, also for a batch
		// of one key (which the client sends as a single command).
		p.AllowPartialResults = true
		return p
	}
	w := &writer{
		cfg:      cfg,
		client:   client,
		m:        m,
		log:      log,
		report:   report,
		readPol:  base(),
		getPol:   base(),
		writePol: base(),
		readBin:  []string{cfg.PositionsBin},
		mapPol:   as.DefaultMapPolicy(),
		sleep:    sleepCtx,
	}
	w.getPol.AllowPartialResults = false // a failed row must fail the read, not read as absent
	return w
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// keyState is one Aerospike key of a batch and what the protocol knows
// about its stored record.
type keyState struct {
	key  *as.Key
	recs []*mapped // not yet applied, skipped or reported; in batch order
	// known: exists, gen and pos describe the stored record as of our last
	// read or our own last successful write.
	known  bool
	exists bool
	gen    uint32
	pos    positions
	// single: write one record per attempt (after a permanent failure of a
	// folded write, to find the record that caused it).
	single  bool
	fails   int
	lastErr error
	fold    *fold // this attempt's write
	// size estimates the key's row with all its records (keySize plus
	// recordSize of each): the upper bound of what its write can send.
	size int
}

func (ks *keyState) String() string {
	return keyString(ks.key)
}

func keyString(k *as.Key) string {
	if v := k.Value(); v != nil && v.GetObject() != nil {
		return fmt.Sprintf("%s/%s/%v", k.Namespace(), k.SetName(), v)
	}
	return fmt.Sprintf("%s/%s/digest:%x", k.Namespace(), k.SetName(), k.Digest())
}

// apply writes the records (already mapped, in batch order). It returns
// nil when every record is applied, skipped as a duplicate or reported; a
// retriable error when transient failures or conflicts outlasted the
// attempts; another error when Aerospike rejected a whole command for good.
func (w *writer) apply(ctx context.Context, recs []*mapped) error {
	w.applied, w.skipped = 0, 0
	if len(recs) == 0 {
		return nil
	}
	// Group by key in two passes, so that all keys share one backing array
	// for their records.
	byDigest := make(map[[20]byte]int, len(recs))
	which := make([]int, len(recs))
	counts := make([]int, 0, len(recs))
	states := make([]keyState, 0, len(recs))
	for i, m := range recs {
		var d [20]byte
		copy(d[:], m.key.Digest())
		k, ok := byDigest[d]
		if !ok {
			k = len(states)
			states = append(states, keyState{key: m.key, size: w.keySize(m)})
			counts = append(counts, 0)
			byDigest[d] = k
		}
		which[i] = k
		counts[k]++
		states[k].size += m.size
	}
	backing := make([]*mapped, len(recs))
	keys := make([]*keyState, len(states))
	off := 0
	for k := range states {
		n := counts[k]
		states[k].recs = backing[off : off : off+n]
		off += n
		keys[k] = &states[k]
	}
	for i, m := range recs {
		ks := &states[which[i]]
		ks.recs = append(ks.recs, m)
	}
	// Cut the keys into commands of at most BatchMaxKeys keys and
	// BatchMaxBytes estimated bytes; a key larger than that goes alone.
	for start := 0; start < len(keys); {
		end, size := start, 0
		for end < len(keys) && end-start < w.cfg.BatchMaxKeys {
			if end > start && size+keys[end].size > w.cfg.BatchMaxBytes {
				break
			}
			size += keys[end].size
			end++
		}
		if err := w.applyChunk(ctx, keys[start:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

func (w *writer) applyChunk(ctx context.Context, keys []*keyState) error {
	backoff := w.cfg.RetryBackoff
	pending := keys
	for {
		troubled := false
		if w.cfg.EffectivelyOnce {
			t, err := w.readPositions(pending)
			if err != nil {
				return err
			}
			troubled = troubled || t
		}
		t, split, err := w.writeRound(pending)
		if err != nil {
			return err
		}
		if split {
			// The client refused the command as too big although the
			// estimates said it fits: write the halves one after the
			// other. The refused keys are read again first, so a write
			// that reached the server after all is not applied twice.
			left := pending[:0:0]
			for _, ks := range pending {
				if len(ks.recs) > 0 {
					left = append(left, ks)
				}
			}
			pending = left
			mid := len(pending) / 2
			if err := w.applyChunk(ctx, pending[:mid]); err != nil {
				return err
			}
			return w.applyChunk(ctx, pending[mid:])
		}
		troubled = troubled || t

		next := pending[:0:0]
		for _, ks := range pending {
			if len(ks.recs) == 0 {
				continue
			}
			if ks.fails >= w.cfg.RetryAttempts {
				m := ks.recs[0]
				return sdk.Retriable(fmt.Errorf("aerospike sink: %s still failing after %d attempts (first unwritten record %s@%d): %w",
					ks, ks.fails, m.pos, m.offset, ks.lastErr))
			}
			next = append(next, ks)
		}
		pending = next
		if len(pending) == 0 {
			return nil
		}
		if troubled {
			// Full jitter keeps competing writers (a zombie task) from
			// colliding in lockstep.
			d := backoff/2 + time.Duration(rand.Int64N(int64(backoff/2)+1))
			if err := w.sleep(ctx, d); err != nil {
				return sdk.Retriable(fmt.Errorf("aerospike sink: put interrupted: %w", err))
			}
			backoff = min(2*backoff, w.cfg.RetryBackoffMax)
		} else if err := ctx.Err(); err != nil {
			return sdk.Retriable(fmt.Errorf("aerospike sink: put interrupted: %w", err))
		}
	}
}

// readPositions reads generation and positions bin of every key whose
// state is not known. It reports whether any key failed transiently.
func (w *writer) readPositions(pending []*keyState) (bool, error) {
	var keys []*as.Key
	var reading []*keyState
	for _, ks := range pending {
		if ks.known {
			continue
		}
		keys = append(keys, ks.key)
		reading = append(reading, ks)
	}
	if len(keys) == 0 {
		return false, nil
	}
	recs, err := w.client.BatchGet(w.getPol, keys, w.cfg.PositionsBin)
	if err != nil {
		rc := errCode(err)
		if classify(rc) != classRetriable {
			// A row the server refused for good fails the whole BatchGet;
			// per-row results tell which key it was.
			return w.readPositionsRows(reading)
		}
		for _, ks := range reading {
			ks.fails++
			ks.lastErr = err
			w.m.retries.Inc()
		}
		w.m.errors.WithLabelValues(codeLabel(rc)).Inc()
		return true, nil
	}
	for i, ks := range reading {
		w.setRead(ks, recs[i])
	}
	return false, nil
}

// setRead records what a read returned for a key; rec is nil when the
// record does not exist.
func (w *writer) setRead(ks *keyState, rec *as.Record) {
	if rec == nil {
		ks.known, ks.exists, ks.gen, ks.pos = true, false, 0, nil
		return
	}
	pos, err := parsePositions(rec, w.cfg.PositionsBin)
	if err != nil {
		w.reportAll(ks, types.BIN_TYPE_ERROR, err)
		return
	}
	ks.known, ks.exists, ks.gen, ks.pos = true, true, rec.Generation, pos
}

// readPositionsRows is readPositions with per-row results (BatchOperate
// reads), used when a BatchGet failed for a reason that is not transient.
func (w *writer) readPositionsRows(reading []*keyState) (bool, error) {
	rows := make([]as.BatchRecordIfc, len(reading))
	for i, ks := range reading {
		rows[i] = as.NewBatchRead(nil, ks.key, w.readBin)
	}
	cmdErr := w.client.BatchOperate(w.readPol, rows)
	cmdCode := types.OK
	if cmdErr != nil {
		cmdCode = errCode(cmdErr)
		if classify(cmdCode) == classPermanent {
			return false, fmt.Errorf("aerospike sink: batch read of %d keys failed: result code %d %s: %w", len(rows), int(cmdCode), cmdCode.String(), cmdErr)
		}
	}
	troubled := false
	for i, ks := range reading {
		br := rows[i].BatchRec()
		rc := br.ResultCode
		if rc == types.NO_RESPONSE && cmdErr != nil {
			rc = cmdCode
		}
		switch {
		case rc == types.OK:
			w.setRead(ks, br.Record)
		case rc == types.KEY_NOT_FOUND_ERROR:
			w.setRead(ks, nil)
		case classify(rc) == classRetriable:
			troubled = true
			ks.fails++
			ks.lastErr = rowErr(br, rc, cmdErr)
			w.m.retries.Inc()
			w.m.errors.WithLabelValues(codeLabel(rc)).Inc()
		default:
			w.reportAll(ks, rc, rowErr(br, rc, cmdErr))
		}
	}
	return troubled, nil
}

func rowErr(br *as.BatchRecord, rc types.ResultCode, cmdErr error) error {
	if br.Err != nil {
		return br.Err
	}
	if cmdErr != nil {
		return cmdErr
	}
	return fmt.Errorf("result code %d %s", int(rc), rc.String())
}

// positions is a record's positions bin as the client decoded it:
// "<topic>-<partition>" → offset. Keeping the client's map saves a copy per
// key; parsePositions has checked every entry.
type positions map[any]any

func (p positions) get(k string) (int64, bool) {
	v, ok := p[k]
	if !ok {
		return 0, false
	}
	n, _ := toInt64(v)
	return n, true
}

// parsePositions checks and returns the positions bin of a read record.
func parsePositions(rec *as.Record, bin string) (positions, error) {
	if rec == nil {
		return nil, nil
	}
	raw, ok := rec.Bins[bin]
	if !ok || raw == nil {
		return nil, nil
	}
	check := func(k, v any) error {
		ks, ok := k.(string)
		if !ok {
			return fmt.Errorf("positions bin %q has a %T key; it is not a positions map (is positions.bin used for data?)", bin, k)
		}
		if _, ok := toInt64(v); !ok {
			return fmt.Errorf("positions bin %q holds %T for %q; it is not a positions map (is positions.bin used for data?)", bin, v, ks)
		}
		return nil
	}
	switch m := raw.(type) {
	case map[any]any:
		for k, v := range m {
			if err := check(k, v); err != nil {
				return nil, err
			}
		}
		return positions(m), nil
	case map[string]any:
		out := make(positions, len(m))
		for k, v := range m {
			if err := check(k, v); err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("positions bin %q holds %T, not a map (is positions.bin used for data?)", bin, raw)
}

// writeRound folds and writes every pending key whose state is known. It
// reports whether any key failed transiently or conflicted, and whether
// the client refused rows of several keys as too big for one command
// (split: the caller writes the keys in smaller commands).
func (w *writer) writeRound(pending []*keyState) (troubled, split bool, err error) {
	var rows []as.BatchRecordIfc
	var writing []*keyState
	sc := newRowScratch(len(pending))
	for _, ks := range pending {
		if w.cfg.EffectivelyOnce && !ks.known {
			continue
		}
		f := w.buildFold(ks)
		if f == nil {
			continue
		}
		row := w.buildRow(ks, f, sc)
		if row == nil {
			// Nothing to write (blind mode, every field excluded): done.
			w.m.written.Add(float64(len(f.recs)))
			w.applied += int64(len(f.recs))
			ks.recs = ks.recs[len(f.recs):]
			continue
		}
		ks.fold = f
		rows = append(rows, row)
		writing = append(writing, ks)
	}
	if len(rows) == 0 {
		return false, false, nil
	}
	cmdErr := w.client.BatchOperate(w.writePol, rows)
	cmdCode := types.OK
	if cmdErr != nil {
		cmdCode = errCode(cmdErr)
		if classify(cmdCode) == classPermanent {
			return false, false, fmt.Errorf("aerospike sink: batch write of %d keys failed: result code %d %s: %w", len(rows), int(cmdCode), cmdCode.String(), cmdErr)
		}
	}
	var refused []*keyState // rows the client would not send (PARSE_ERROR)
	for i, ks := range writing {
		br := rows[i].BatchRec()
		f := ks.fold
		ks.fold = nil
		rc := br.ResultCode
		if rc == types.NO_RESPONSE && cmdErr != nil {
			rc = cmdCode
		}
		if rc == types.KEY_NOT_FOUND_ERROR && !w.cfg.EffectivelyOnce {
			rc = types.OK // a blind delete of a missing record
		}
		if rc == types.PARSE_ERROR {
			// The client refuses a command over its buffer limit before
			// sending it. Retrying the same command would fail the same
			// way forever; see tooBig.
			ks.lastErr = rowErr(br, rc, cmdErr)
			ks.fold = f
			refused = append(refused, ks)
			continue
		}
		switch classify(rc) {
		case classOK:
			w.m.written.Add(float64(len(f.recs)))
			w.applied += int64(len(f.recs))
			ks.recs = ks.recs[len(f.recs):]
			if f.isDelete() {
				// Gone, positions and all: the next records of the key
				// create it again.
				ks.known, ks.exists, ks.gen, ks.pos = true, false, 0, nil
				continue
			}
			if w.cfg.EffectivelyOnce {
				ks.exists = true
				if br.Record != nil {
					ks.gen = br.Record.Generation
				} else {
					ks.known = false
				}
				if ks.pos == nil {
					ks.pos = make(positions, len(f.pos))
				}
				for p, o := range f.pos {
					ks.pos[p] = o
				}
			}
		case classConflict:
			troubled = true
			ks.known = false
			ks.fails++
			ks.lastErr = rowErr(br, rc, cmdErr)
			w.m.conflicts.Inc()
		case classRetriable:
			troubled = true
			ks.known = false // the write may have been applied: read again
			ks.fails++
			ks.lastErr = rowErr(br, rc, cmdErr)
			w.m.retries.Inc()
			w.m.errors.WithLabelValues(codeLabel(rc)).Inc()
		default:
			if len(f.recs) > 1 {
				// Find the culprit: write this key's records one by one.
				ks.single = true
				w.log.Debug("folded write rejected; writing records one by one", "key", ks.String(), "result_code", int(rc))
				continue
			}
			w.reportOne(ks, f.recs[0], rc, rowErr(br, rc, cmdErr))
			ks.recs = ks.recs[1:]
		}
	}
	switch {
	case len(refused) > 1:
		for _, ks := range refused {
			ks.known = false // read again before the smaller commands
			ks.fold = nil
		}
		return troubled, true, nil
	case len(refused) == 1:
		w.tooBig(refused[0])
	}
	return troubled, false, nil
}

// tooBig handles the one key of a command the client refused as too big:
// a folded write is broken up into single records; a single record can
// never be sent and is reported (PARSE_ERROR) instead of retried.
func (w *writer) tooBig(ks *keyState) {
	f := ks.fold
	ks.fold = nil
	ks.known = false
	if len(f.recs) > 1 {
		ks.single = true
		w.log.Debug("folded write too big for one command; writing records one by one", "key", ks.String())
		return
	}
	w.reportOne(ks, f.recs[0], types.PARSE_ERROR, fmt.Errorf("the record is too big for one Aerospike command (about %d bytes): %w", f.recs[0].size, ks.lastErr))
	ks.recs = ks.recs[1:]
}

// buildFold drops records the stored positions show as applied and folds
// the rest (one record in single mode). nil means nothing to write.
func (w *writer) buildFold(ks *keyState) *fold {
	f := newFold(w.cfg.WriteMode)
	f.deletes = w.cfg.TombstoneDelete && w.cfg.EffectivelyOnce
	kept := ks.recs[:0]
	stop := false
	size := 0 // estimated bytes of the fold's records
	for _, m := range ks.recs {
		if w.cfg.EffectivelyOnce {
			applied, ok := ks.pos.get(m.pos)
			if cur, inFold := f.pos[m.pos]; inFold && (!ok || cur > applied) {
				applied, ok = cur, true
			}
			if ok && m.offset <= applied {
				w.m.duplicates.Inc()
				w.skipped++
				continue
			}
		}
		kept = append(kept, m)
		if stop {
			continue
		}
		if !f.empty() && size+m.size > w.cfg.BatchMaxBytes {
			// Keep one write within a command's bytes; the rest of the
			// key's records go into the next write.
			stop = true
			continue
		}
		size += m.size
		if !f.add(m) {
			stop = true
			continue
		}
		if ks.single {
			stop = true
		}
	}
	ks.recs = kept
	if f.empty() {
		return nil
	}
	return f
}

// rowScratch holds the policies and operations of one round's rows in
// shared backing arrays instead of one allocation per row.
type rowScratch struct {
	pols  []as.BatchWritePolicy // capacity fixed up front: rows keep pointers
	ops   []*as.Operation
	arena opArena
}

// opArena stores operations in blocks, so that building a row's ops does
// not allocate each one on its own. A full block is left to its rows and a
// new one started: pointers into a block stay valid.
type opArena struct{ block []as.Operation }

func (a *opArena) add(op as.Operation) *as.Operation {
	if len(a.block) == cap(a.block) {
		a.block = make([]as.Operation, 0, 512)
	}
	a.block = append(a.block, op)
	return &a.block[len(a.block)-1]
}

func newRowScratch(rows int) *rowScratch {
	return &rowScratch{pols: make([]as.BatchWritePolicy, 0, rows), ops: make([]*as.Operation, 0, 12*rows)}
}

// buildRow turns a fold into one batch row. With the protocol on, an
// existing record is written only if its generation is still the one read
// (and the positions bin is updated in the same operation); an absent
// record is created only if it is still absent.
func (w *writer) buildRow(ks *keyState, f *fold, sc *rowScratch) as.BatchRecordIfc {
	sc.pols = append(sc.pols, as.BatchWritePolicy{
		RecordExistsAction: as.UPDATE,
		GenerationPolicy:   as.NONE,
		CommitLevel:        as.COMMIT_ALL,
		Expiration:         w.ttl(f),
		SendKey:            w.cfg.SendKey,
	})
	pol := &sc.pols[len(sc.pols)-1]
	if f.isDelete() {
		if !ks.exists {
			return nil // nothing to delete
		}
		// Only the record as read: a record another writer changed
		// meanwhile is read again first, as for any write.
		return as.NewBatchDelete(&as.BatchDeletePolicy{
			GenerationPolicy: as.EXPECT_GEN_EQUAL, Generation: ks.gen,
			CommitLevel: as.COMMIT_ALL, SendKey: w.cfg.SendKey,
		}, ks.key)
	}
	clearing := f.isClear()
	start := len(sc.ops)
	sc.ops = f.appendOps(sc.ops, &sc.arena, w.mapPol, clearing, w.cfg.EffectivelyOnce && !ks.exists)
	if !w.cfg.EffectivelyOnce {
		n := len(sc.ops) - start
		switch {
		case clearing && n == 0:
			return as.NewBatchDelete(&as.BatchDeletePolicy{CommitLevel: as.COMMIT_ALL, SendKey: w.cfg.SendKey}, ks.key)
		case clearing:
			pol.RecordExistsAction = as.REPLACE
		case n == 0:
			return nil
		}
		return as.NewBatchWrite(pol, ks.key, sc.ops[start:len(sc.ops):len(sc.ops)]...)
	}
	switch {
	case !ks.exists:
		pol.RecordExistsAction = as.CREATE_ONLY
		sc.ops = append(sc.ops, sc.arena.add(*as.PutOp(as.NewBin(w.cfg.PositionsBin, posMap(nil, f.pos)))))
	case clearing:
		// REPLACE drops every bin, the positions bin included, so it is
		// written whole: the stored map (current, per the generation check)
		// merged with this run's positions.
		pol.RecordExistsAction = as.REPLACE
		pol.GenerationPolicy, pol.Generation = as.EXPECT_GEN_EQUAL, ks.gen
		sc.ops = append(sc.ops, sc.arena.add(*as.PutOp(as.NewBin(w.cfg.PositionsBin, posMap(ks.pos, f.pos)))))
	case len(f.pos) == 1:
		pol.GenerationPolicy, pol.Generation = as.EXPECT_GEN_EQUAL, ks.gen
		for p, o := range f.pos {
			sc.ops = append(sc.ops, as.MapPutOp(w.mapPol, w.cfg.PositionsBin, p, o))
		}
	default:
		pol.GenerationPolicy, pol.Generation = as.EXPECT_GEN_EQUAL, ks.gen
		sc.ops = append(sc.ops, as.MapPutItemsOp(w.mapPol, w.cfg.PositionsBin, posMap(nil, f.pos)))
	}
	return as.NewBatchWrite(pol, ks.key, sc.ops[start:len(sc.ops):len(sc.ops)]...)
}

// ttl is the expiration of a fold's write: the ttl key, or with ttl.field
// the TTL of the run's last record that has a value, as applying the
// records one by one leaves it. A run of tombstones keeps the stored TTL.
func (w *writer) ttl(f *fold) uint32 {
	if w.cfg.TTLField == nil {
		return w.cfg.ttlSeconds()
	}
	for i := len(f.recs) - 1; i >= 0; i-- {
		if !f.recs[i].tombstone {
			return f.recs[i].ttl
		}
	}
	return as.TTLDontUpdate
}

func posMap(stored positions, run map[string]int64) map[any]any {
	out := make(map[any]any, len(stored)+len(run))
	for k, v := range stored {
		out[k] = v
	}
	for k, v := range run {
		out[k] = v
	}
	return out
}

func (w *writer) reportOne(ks *keyState, m *mapped, rc types.ResultCode, err error) {
	w.m.errors.WithLabelValues(codeLabel(rc)).Inc()
	w.report(m.rec, &WriteError{
		Topic: m.rec.OriginalTopic, Partition: m.rec.OriginalPartition, Offset: m.rec.OriginalOffset,
		Key: ks.String(), Code: rc, Err: err,
	})
}

// reportAll reports every remaining record of a key that cannot be
// written at all (its stored record is unusable).
func (w *writer) reportAll(ks *keyState, rc types.ResultCode, err error) {
	for _, m := range ks.recs {
		w.reportOne(ks, m, rc, err)
	}
	ks.recs = nil
}
