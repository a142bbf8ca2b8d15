package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/sdk"
)

// Class is the connector.class of this connector.
const Class = "KafkaReplicationSource"

// Version is the connector's version, shown by the REST API.
const Version = "0.1.0"

// Connector is the KafkaReplicationSource connector. The zero value is
// ready to use; the framework calls Start before TaskConfigs.
type Connector struct {
	mu       sync.Mutex
	cfg      *Config
	props    map[string]string
	name     string
	cctx     sdk.ConnectorContext
	log      *slog.Logger
	src, dst *ckafka.AdminClient
	state    replicationState
	// verified are target topics seen with at least their source's
	// partition count; only those are grown when their source grows.
	verified map[string]bool
	skipped  string // last logged list of skipped (loop-forming) topics
	// policySkipped is the last logged list of topics the policy excludes.
	policySkipped string
	warned        map[string]string // warnOnce: key → last text logged
	cancel        context.CancelFunc
	done          chan struct{}
}

// replicationState is the connector's current view: which partitions exist
// and where they go. TaskConfigs is a pure function of it.
type replicationState struct {
	cluster string         // value of "cluster" in source partitions
	sources map[string]int // source topic → partition count
	targets map[string]int // target topic → partition count
}

func (s replicationState) equal(o replicationState, mapping string) bool {
	if s.cluster != o.cluster || !maps.Equal(s.sources, o.sources) {
		return false
	}
	// Target partition counts only change task configs under key-hash.
	return mapping != MappingKeyHash || maps.Equal(s.targets, o.targets)
}

// NewConnector returns a KafkaReplicationSource connector.
func NewConnector() *Connector { return &Connector{} }

var _ sdk.SourceConnector = (*Connector)(nil)

// Spec implements sdk.Connector.
func (c *Connector) Spec() sdk.Spec {
	return sdk.Spec{
		Class:   Class,
		Version: Version,
		Type:    sdk.Source,
		Summary: "Replicates Kafka topics from a source cluster, exactly once, byte for byte (MirrorMaker 2-style).",
		Config:  configDef(),
		// Every source partition belongs to one task and all position lives
		// in the framework's offsets.
		ExactlyOnce: true,
		// Records are copies: a worker default of JsonConverter must not
		// turn them into base64 strings.
		RawBytes: true,
	}
}

// Validate implements sdk.Connector: rules across keys, plus a check that
// the identity format is not used on one cluster (by cluster ID, when both
// clusters answer quickly).
func (c *Connector) Validate(ctx context.Context, props map[string]string) []sdk.FieldError {
	errs := crossKeyErrors(props)
	if len(errs) > 0 {
		return errs
	}
	cfg, err := ParseConfig(props)
	if err != nil || !cfg.identityNames() {
		return nil // per-key problems are reported by the framework's ConfigDef check
	}
	if same, err := sameCluster(ctx, cfg); err == nil && same {
		if cfg.Policy != nil {
			return []sdk.FieldError{{Key: KeyPolicyClass, Message: selfReplicationPolicyMessage}}
		}
		return []sdk.FieldError{{Key: KeyTargetFormat, Message: selfReplicationMessage}}
	}
	return nil
}

// sameCluster compares the cluster IDs of source and target. An unreachable
// cluster is not a validation error: it may come up later, and Start checks
// again.
func sameCluster(ctx context.Context, cfg *Config) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ids := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, side := range []struct {
		bootstrap string
		extra     map[string]string
	}{{cfg.SourceBootstrap, cfg.SourceAdmin}, {cfg.TargetBootstrap, cfg.TargetAdmin}} {
		wg.Go(func() {
			a, err := newAdmin(side.bootstrap, side.extra, "connectd-replication-validate")
			if err != nil {
				errs[i] = err
				return
			}
			defer a.Close()
			ids[i], errs[i] = clusterID(ctx, a)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	return ids[0] != "" && ids[0] == ids[1], nil
}

// Start implements sdk.Connector. It looks at both clusters once (creating
// missing target topics) so that a bad setup fails fast with a clear
// trace, then keeps watching for new topics and partitions.
func (c *Connector) Start(ctx context.Context, cctx sdk.ConnectorContext, props map[string]string) error {
	cfg, err := ParseConfig(props)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cfg, c.props, c.cctx = cfg, maps.Clone(props), cctx
	c.name = props["name"]
	c.log = cctx.Logger()
	c.verified = map[string]bool{}
	c.warned = map[string]string{}
	if c.src, err = newAdmin(cfg.SourceBootstrap, cfg.SourceAdmin, "connectd-replication-"+c.name+"-source-admin"); err != nil {
		return err
	}
	if c.dst, err = newAdmin(cfg.TargetBootstrap, cfg.TargetAdmin, "connectd-replication-"+c.name+"-target-admin"); err != nil {
		c.src.Close()
		return err
	}
	st, err := c.refresh(ctx)
	if err != nil {
		c.closeAdmins()
		return err
	}
	c.state = st
	c.log.Info("replicating", "source_topics", len(st.sources), "partitions", len(allPartitions(st.sources)),
		"source_cluster", st.cluster, "target_names", cfg.namingDescription(), "partition_mapping", cfg.Mapping)
	loopCtx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go c.watch(loopCtx, c.done)
	return nil
}

// refresh looks at both clusters, selects the source topics and makes sure
// their target topics exist. Callers hold c.mu.
func (c *Connector) refresh(ctx context.Context) (replicationState, error) {
	var src, dst clusterState
	var srcErr, dstErr error
	var wg sync.WaitGroup
	wg.Go(func() { src, srcErr = describe(ctx, c.src, "source", c.cfg.SourceBootstrap) })
	wg.Go(func() { dst, dstErr = describe(ctx, c.dst, "target", c.cfg.TargetBootstrap) })
	wg.Wait()
	if err := errors.Join(srcErr, dstErr); err != nil {
		return replicationState{}, err
	}
	sel, err := selectTopics(c.cfg, src, src.id == dst.id)
	if err != nil {
		return replicationState{}, err
	}
	if s := strings.Join(sel.skipped, ","); s != c.skipped {
		c.skipped = s
		if s != "" {
			c.log.Warn("not replicating topics named like target topics: source and target are the same cluster", "topics", s)
		}
	}
	if s := strings.Join(sel.policySkipped, ","); s != c.policySkipped {
		c.policySkipped = s
		if s != "" {
			c.log.Info("not replicating topics the replication policy excludes (internal topics; topics that came from the target cluster)",
				"topics", s, "target_cluster_alias", c.cfg.TargetClusterAlias)
		}
	}
	synced := c.sourceConfigs(ctx, sel.sources)
	plan, err := ensureTargets(ctx, c.cfg, c.dst, dst, sel.sources, c.verified, synced)
	if err != nil {
		return replicationState{}, err
	}
	for _, t := range plan.created {
		c.log.Info("created target topic", "topic", t, "partitions", plan.counts[t], "configs", formatConfigs(createConfig(c.cfg, synced[c.sourceOf(t, sel.sources)])))
	}
	c.syncConfigs(ctx, sel.sources, synced, plan)
	for _, t := range plan.grown {
		c.log.Info("added partitions to target topic", "topic", t, "partitions", plan.counts[t])
	}
	for s, n := range sel.sources {
		if t := c.cfg.TargetTopic(s); plan.counts[t] >= n {
			c.verified[t] = true
		}
	}
	cluster := c.cfg.SourceClusterAlias
	if cluster == "" {
		cluster = src.id
	}
	return replicationState{cluster: cluster, sources: sel.sources, targets: plan.counts}, nil
}

// sourceConfigs reads the source topics' configs to sync, or nil when
// sync.topic.configs.enabled is off. A failure to read them (a missing
// DescribeConfigs permission, a timeout) is logged and replication goes
// on: configs are not worth stopping the copy for, and the next refresh
// tries again. Callers hold c.mu.
func (c *Connector) sourceConfigs(ctx context.Context, sources map[string]int) topicConfigs {
	if !c.cfg.SyncTopicConfigs {
		return nil
	}
	synced, err := explicitTopicConfigs(ctx, c.cfg, c.src, slices.Sorted(maps.Keys(sources)))
	if err != nil {
		c.warnOnce("describe-source-configs", err.Error(), "cannot read source topic configs; not syncing them this time", "err", err)
		return nil
	}
	delete(c.warned, "describe-source-configs")
	return synced
}

// syncConfigs copies the synced source configs to target topics that
// existed before this refresh (created ones got them at creation). A
// refused change is logged, once per topic and reason. Callers hold c.mu.
func (c *Connector) syncConfigs(ctx context.Context, sources map[string]int, synced topicConfigs, plan targetPlan) {
	if len(synced) == 0 {
		return
	}
	want := map[string]map[string]string{}
	for src := range sources {
		t := c.cfg.TargetTopic(src)
		if _, ok := plan.counts[t]; ok && !slices.Contains(plan.created, t) && len(synced[src]) > 0 {
			want[t] = synced[src]
		}
	}
	if len(want) == 0 {
		return
	}
	changed, refused, err := syncTopicConfigs(ctx, c.dst, want)
	if err != nil {
		c.warnOnce("sync-configs", err.Error(), "cannot sync target topic configs; trying again at the next refresh", "err", err)
		return
	}
	delete(c.warned, "sync-configs")
	for _, ch := range changed {
		c.log.Info("synced target topic configs from its source", "topic", ch.target, "configs", formatConfigs(ch.set))
	}
	for t, why := range refused {
		c.warnOnce("sync-configs:"+t, why, "the target cluster refused a topic config from the source; the target keeps its value",
			"topic", t, "err", why)
	}
}

// warnOnce logs a warning unless the same key last logged the same text.
func (c *Connector) warnOnce(key, text, msg string, args ...any) {
	if c.warned[key] == text {
		return
	}
	c.warned[key] = text
	c.log.Warn(msg, args...)
}

// sourceOf is the source topic whose target is t.
func (c *Connector) sourceOf(t string, sources map[string]int) string {
	for s := range sources {
		if c.cfg.TargetTopic(s) == t {
			return s
		}
	}
	return ""
}

// watch refreshes the view every topic.refresh.interval.ms and asks for
// new task configurations when it changed. Conditions that heal by
// themselves (a cluster briefly unreachable) are logged; conditions that
// need the user (topics gone, a target too small) fail the connector
// through RaiseError, and the framework restarts it with backoff.
func (c *Connector) watch(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(c.cfg.Refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.mu.Lock()
		st, err := c.refresh(ctx)
		switch {
		case ctx.Err() != nil:
			c.mu.Unlock()
			return
		case errors.Is(err, ErrUnreachable):
			c.log.Warn("topic refresh failed; keeping the current assignment", "err", err)
		case err != nil:
			c.mu.Unlock()
			c.log.Error("replication cannot continue", "err", err)
			c.cctx.RaiseError(err)
			return
		case !st.equal(c.state, c.cfg.Mapping):
			c.log.Info("source topics changed; requesting task reconfiguration",
				"source_topics", len(st.sources), "partitions", len(allPartitions(st.sources)))
			c.state = st
			c.mu.Unlock()
			c.cctx.RequestTaskReconfiguration()
			continue
		}
		c.mu.Unlock()
	}
}

// TaskConfigs implements sdk.Connector: every source partition goes to
// exactly one task, spread evenly.
func (c *Connector) TaskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg == nil {
		return nil, errors.New("TaskConfigs called before Start")
	}
	groups := assign(allPartitions(c.state.sources), maxTasks)
	out := make([]map[string]string, 0, len(groups))
	for _, g := range groups {
		m := maps.Clone(c.props)
		m[taskKeyPartitions] = encodePartitions(g)
		m[taskKeySourceCluster] = c.state.cluster
		if c.cfg.Mapping == MappingKeyHash {
			counts := map[string]int{}
			for _, tp := range g {
				t := c.cfg.TargetTopic(tp.Topic)
				counts[t] = c.state.targets[t]
			}
			m[taskKeyTargetPartitions] = encodeCounts(counts)
		}
		out = append(out, m)
	}
	return out, nil
}

// Stop implements sdk.Connector.
func (c *Connector) Stop(ctx context.Context) error {
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		select {
		case <-done:
		case <-ctx.Done():
			return fmt.Errorf("stopping the topic watcher: %w", ctx.Err())
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeAdmins()
	return nil
}

func (c *Connector) closeAdmins() {
	if c.src != nil {
		c.src.Close()
		c.src = nil
	}
	if c.dst != nil {
		c.dst.Close()
		c.dst = nil
	}
}

// NewTask implements sdk.SourceConnector.
func (c *Connector) NewTask() sdk.SourceTask { return &Task{} }
