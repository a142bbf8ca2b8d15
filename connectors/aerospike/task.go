package aerospike

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/framework/sdk"
)

// SinkTask writes Kafka records to Aerospike. Put is synchronous: when it
// returns nil every record of the batch is applied, skipped as already
// applied, or handed to ReportError.
type SinkTask struct {
	cfg    *Config
	tctx   sdk.SinkTaskContext
	log    *slog.Logger
	client *as.Client
	mapper *mapper
	w      *writer
	m      *sinkMetrics

	mu sync.Mutex
	// committable holds, per partition, the offset after the last record of
	// a successful Put: Flush never lets the framework commit past it.
	committable map[sdk.TopicPartition]int64
}

var _ sdk.SinkTask = (*SinkTask)(nil)

// Start parses the configuration and connects to the cluster.
func (t *SinkTask) Start(ctx context.Context, tctx sdk.SinkTaskContext, props map[string]string) error {
	cfg, errs := parseConfig(props)
	if len(errs) > 0 {
		return fieldErrors(errs)
	}
	t.cfg = cfg
	t.tctx = tctx
	t.log = tctx.Logger()
	m, err := newSinkMetrics(tctx.Metrics())
	if err != nil {
		return fmt.Errorf("aerospike sink: metrics: %w", err)
	}
	t.m = m
	client, err := connect(ctx, cfg)
	if err != nil && securityUnsupported(err) {
		// Retrying cannot help: the task fails with the reason.
		return fmt.Errorf("aerospike sink: %w: %w", errNoSecurity, err)
	}
	if err != nil {
		return sdk.Retriable(err)
	}
	t.client = client
	t.mapper = newMapper(cfg)
	if cfg.NamespaceSrc.dynamic() {
		t.mapper.namespaces = &namespaceCache{list: func() ([]string, error) { return listNamespaces(client, cfg.TotalTimeout) }}
	}
	t.w = newWriter(cfg, client, m, t.log, tctx.ReportError)
	t.committable = map[sdk.TopicPartition]int64{}
	t.log.Info("aerospike sink task started", "hosts", hostsString(cfg.Hosts), "namespace", cfg.Namespace,
		"write_mode", cfg.WriteMode, "effectively_once", cfg.EffectivelyOnce)
	return nil
}

// connect opens a client; ctx bounds how long the caller waits for it.
func connect(ctx context.Context, cfg *Config) (*as.Client, error) {
	pol, err := cfg.clientPolicy()
	if err != nil {
		return nil, fmt.Errorf("aerospike sink: %w", err)
	}
	type result struct {
		c   *as.Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := as.NewClientWithPolicyAndHost(pol, cfg.Hosts...)
		if err != nil {
			done <- result{nil, err}
			return
		}
		done <- result{c, nil}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("aerospike sink: cannot connect to %s: %w", hostsString(cfg.Hosts), r.err)
		}
		return r.c, nil
	case <-ctx.Done():
		go func() {
			if r := <-done; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, fmt.Errorf("aerospike sink: connecting to %s: %w", hostsString(cfg.Hosts), ctx.Err())
	}
}

func hostsString(hosts []*as.Host) string {
	s := make([]string, len(hosts))
	for i, h := range hosts {
		s[i] = h.String()
	}
	return strings.Join(s, ",")
}

// Open is a no-op: positions live in the Aerospike records themselves.
func (t *SinkTask) Open(ctx context.Context, partitions []sdk.TopicPartition) error { return nil }

// Close forgets the committable offsets of partitions the task gave up.
func (t *SinkTask) Close(ctx context.Context, partitions []sdk.TopicPartition) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tp := range partitions {
		delete(t.committable, tp)
	}
	return nil
}

// Put maps and writes a batch with the effectively-once protocol.
func (t *SinkTask) Put(ctx context.Context, records []*sdk.SinkRecord) error {
	if len(records) == 0 {
		return nil
	}
	start := time.Now()
	defer func() { t.m.putSeconds.Observe(time.Since(start).Seconds()) }()
	store := make([]mapped, len(records))
	arena := make([]bin, 0, 8*len(records))
	mapped := make([]*mapped, 0, len(records))
	for i, rec := range records {
		mr := &store[i]
		if err := t.mapper.mapRecord(rec, i, mr, &arena); err != nil {
			if !errors.Is(err, ErrMapping) {
				return err // the cluster could not be asked (retriable)
			}
			t.m.errors.WithLabelValues(labelBadMapping).Inc()
			t.tctx.ReportError(rec, fmt.Errorf("record %s-%d@%d: %w", rec.OriginalTopic, rec.OriginalPartition, rec.OriginalOffset, err))
			continue
		}
		mapped = append(mapped, mr)
	}
	if err := t.w.apply(ctx, mapped); err != nil {
		return err
	}
	t.recordStats()
	t.mu.Lock()
	for _, rec := range records {
		tp := rec.OriginalTopicPartition()
		if next := rec.OriginalOffset + 1; next > t.committable[tp] {
			t.committable[tp] = next
		}
	}
	t.mu.Unlock()
	return nil
}

// recordStats adds the Put's applied and skipped records to the
// connector's stats.set record. A failure is logged and counted, not
// returned: the records are applied, and failing the Put would only have
// them delivered again.
func (t *SinkTask) recordStats() {
	if t.cfg.StatsSet == "" || t.w.applied+t.w.skipped == 0 {
		return
	}
	key, err := as.NewKey(t.cfg.Namespace, t.cfg.StatsSet, t.tctx.Connector())
	if err != nil {
		t.log.Warn("stats.set: cannot build the counters' key", "error", err)
		return
	}
	pol := as.NewWritePolicy(0, 0)
	pol.TotalTimeout, pol.SocketTimeout, pol.MaxRetries = t.cfg.TotalTimeout, t.cfg.SocketTimeout, t.cfg.ClientRetries
	pol.SendKey = true
	if _, err := t.client.Operate(pol, key,
		as.AddOp(as.NewBin(StatsBinApplied, t.w.applied)),
		as.AddOp(as.NewBin(StatsBinDuplicates, t.w.skipped))); err != nil {
		code := "unknown"
		var ae *as.AerospikeError
		if errors.As(err, &ae) {
			code = codeLabel(ae.ResultCode)
		}
		t.m.errors.WithLabelValues(code).Inc()
		t.log.Warn("stats.set: counters not updated", "set", t.cfg.StatsSet, "applied", t.w.applied, "skipped", t.w.skipped, "error", err)
	}
}

// Flush returns, per partition, the requested offset capped at what
// successful Puts covered, so a failed Put's records are never committed.
func (t *SinkTask) Flush(ctx context.Context, offsets map[sdk.TopicPartition]int64) (map[sdk.TopicPartition]int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[sdk.TopicPartition]int64, len(offsets))
	for tp, off := range offsets {
		c, ok := t.committable[tp]
		if !ok {
			continue
		}
		out[tp] = min(off, c)
	}
	return out, nil
}

// Stop closes the client.
func (t *SinkTask) Stop(ctx context.Context) error {
	if t.client != nil {
		t.client.Close()
		t.client = nil
	}
	return nil
}

// fieldErrors joins per-key configuration errors into one error.
func fieldErrors(errs []sdk.FieldError) error {
	es := make([]error, len(errs))
	for i, e := range errs {
		es[i] = fmt.Errorf("%s: %s", e.Key, e.Message)
	}
	return fmt.Errorf("aerospike sink: invalid configuration: %w", errors.Join(es...))
}

// listNamespaces asks a node of the cluster for its namespaces.
func listNamespaces(client *as.Client, timeout time.Duration) ([]string, error) {
	nodes := client.GetNodes()
	if len(nodes) == 0 {
		return nil, errors.New("the cluster has no active node")
	}
	ip := as.NewInfoPolicy()
	ip.Timeout = timeout
	info, err := nodes[0].RequestInfo(ip, "namespaces")
	if err != nil {
		return nil, fmt.Errorf("info namespaces from %s: %w", nodes[0].GetName(), err)
	}
	return strings.Split(strings.TrimSpace(info["namespaces"]), ";"), nil
}
