package plugins

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// taskContext is what every task context shares.
type taskContext struct {
	connector string
	task      int
	log       *slog.Logger
	reg       *prometheus.Registry // gathered by the server
	wrapped   prometheus.Registerer
}

func newTaskContext(base *slog.Logger, connector string, task int) *taskContext {
	reg := prometheus.NewRegistry()
	return &taskContext{
		connector: connector, task: task,
		log: base.With("connector", connector, "task", task),
		reg: reg,
		wrapped: prometheus.WrapRegistererWith(prometheus.Labels{
			"connector": connector, "task": strconv.Itoa(task),
		}, reg),
	}
}

func (c *taskContext) Connector() string              { return c.connector }
func (c *taskContext) TaskID() int                    { return c.task }
func (c *taskContext) Logger() *slog.Logger           { return c.log }
func (c *taskContext) Metrics() prometheus.Registerer { return c.wrapped }

// sourceTaskContext implements sdk.SourceTaskContext.
type sourceTaskContext struct {
	*taskContext
	offsets map[string]map[string]any // canonical partition JSON -> offset
	tx      *transactions             // nil unless transaction.boundary=connector
}

func (c *sourceTaskContext) Offset(partition map[string]any) map[string]any {
	key, err := json.Marshal(partition)
	if err != nil {
		return nil
	}
	off, ok := c.offsets[string(key)]
	if !ok {
		return nil
	}
	// A copy, so a task that edits it cannot corrupt the snapshot.
	cp := make(map[string]any, len(off))
	for k, v := range off {
		cp[k] = v
	}
	return cp
}

func (c *sourceTaskContext) Transactions() sdk.TransactionContext {
	if c.tx == nil {
		return nil
	}
	return c.tx
}

// offsetSnapshot indexes committed offsets by canonical partition JSON
// (json.Marshal sorts map keys), whatever the stored bytes' key order.
func offsetSnapshot(in []*pluginpb.SourceOffset) (map[string]map[string]any, error) {
	out := make(map[string]map[string]any, len(in))
	for _, o := range in {
		var p, v map[string]any
		if err := json.Unmarshal(o.GetPartition(), &p); err != nil {
			return nil, fmt.Errorf("committed source partition %q is not a JSON object: %w", o.GetPartition(), err)
		}
		if len(o.GetOffset()) > 0 && string(o.GetOffset()) != "null" {
			if err := json.Unmarshal(o.GetOffset(), &v); err != nil {
				return nil, fmt.Errorf("committed source offset %q is not a JSON object: %w", o.GetOffset(), err)
			}
		}
		key, _ := json.Marshal(p)
		if v == nil {
			delete(out, string(key)) // a null offset is a tombstone: reset
			continue
		}
		out[string(key)] = v
	}
	return out, nil
}

// transactions implements sdk.TransactionContext: it remembers the
// boundaries the task asks for until the batch carrying them is built.
type transactions struct {
	mu      sync.Mutex
	marks   map[*sdk.SourceRecord]pluginpb.Boundary
	pending pluginpb.Boundary // Commit/Abort: after the last record
}

func newTransactions() *transactions {
	return &transactions{marks: map[*sdk.SourceRecord]pluginpb.Boundary{}}
}

func (t *transactions) CommitAfter(rec *sdk.SourceRecord) {
	t.mark(rec, pluginpb.Boundary_BOUNDARY_COMMIT_AFTER)
}
func (t *transactions) AbortAfter(rec *sdk.SourceRecord) {
	t.mark(rec, pluginpb.Boundary_BOUNDARY_ABORT_AFTER)
}
func (t *transactions) Commit() { t.set(pluginpb.Boundary_BOUNDARY_COMMIT_AFTER) }
func (t *transactions) Abort()  { t.set(pluginpb.Boundary_BOUNDARY_ABORT_AFTER) }

func (t *transactions) mark(rec *sdk.SourceRecord, b pluginpb.Boundary) {
	if rec == nil {
		return
	}
	t.mu.Lock()
	t.marks[rec] = b
	t.mu.Unlock()
}

func (t *transactions) set(b pluginpb.Boundary) {
	t.mu.Lock()
	t.pending = b
	t.mu.Unlock()
}

// take returns the boundary requested for rec (and forgets it).
func (t *transactions) take(rec *sdk.SourceRecord) pluginpb.Boundary {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.marks) == 0 {
		return pluginpb.Boundary_BOUNDARY_NONE
	}
	b, ok := t.marks[rec]
	if ok {
		delete(t.marks, rec)
	}
	return b
}

func (t *transactions) peekPending() pluginpb.Boundary {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pending
}

// takePending returns the Commit/Abort request (and forgets it), and drops
// marks for records that were never returned: they cannot apply any more.
func (t *transactions) takePending() pluginpb.Boundary {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.pending
	t.pending = pluginpb.Boundary_BOUNDARY_NONE
	clear(t.marks)
	return b
}

// sinkTaskContext implements sdk.SinkTaskContext.
type sinkTaskContext struct {
	*taskContext
	mu     sync.Mutex
	report func(rec *sdk.SinkRecord, err error) // set while Put runs
}

func (c *sinkTaskContext) ReportError(rec *sdk.SinkRecord, err error) {
	c.mu.Lock()
	f := c.report
	c.mu.Unlock()
	if f == nil {
		c.log.Error("ReportError called outside Put; the record is ignored", "error", err)
		return
	}
	f(rec, err)
}
