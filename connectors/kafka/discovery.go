package kafka

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/sdk"
)

// Errors the connector reports. Callers (and tests) branch on them with
// errors.Is; the wrapping error carries the details for the status trace.
var (
	// ErrUnreachable: a cluster did not answer within the discovery timeout.
	// Retriable: the framework restarts the connector with backoff.
	ErrUnreachable = errors.New("cluster unreachable")
	// ErrMissingTopics: a topic named in topics does not exist on the source
	// cluster. Retriable: it heals when the topic is created.
	ErrMissingTopics = errors.New("source topics missing")
	// ErrNoTopics: topics.regex matches no topic of the source cluster.
	// Retriable: it heals when a matching topic is created.
	ErrNoTopics = errors.New("no source topic matches")
	// ErrTargetTooSmall: a pre-existing target topic has fewer partitions
	// than its source topic under partition.mapping=preserve. Not retriable
	// by the connector: an operator must add partitions (or choose another
	// target name or key-hash).
	ErrTargetTooSmall = errors.New("target topic has fewer partitions than its source")
	// ErrSelfReplication: source and target are the same cluster and a
	// topic would be copied onto itself.
	ErrSelfReplication = errors.New("topic would be replicated onto itself")
)

// discoveryTimeout bounds one look at a cluster. Start does one look at
// each cluster in parallel, well within the host's call timeout.
const discoveryTimeout = 10 * time.Second

// clusterState is one look at a cluster: its ID and every topic with its
// partition count.
type clusterState struct {
	id     string
	topics map[string]int
}

// newAdmin creates an admin client. librdkafka connects lazily, so this
// fails only on bad configuration.
func newAdmin(bootstrap string, extra map[string]string, clientID string) (*ckafka.AdminClient, error) {
	cm := ckafka.ConfigMap{}
	for k, v := range extra {
		cm[k] = v
	}
	cm["bootstrap.servers"] = bootstrap
	if _, ok := cm["client.id"]; !ok {
		cm["client.id"] = clientID
	}
	// Log connection failures through errors returned to us, not stderr.
	cm["log.connection.close"] = false
	a, err := ckafka.NewAdminClient(&cm)
	if err != nil {
		return nil, fmt.Errorf("admin client for %s: %w", bootstrap, err)
	}
	return a, nil
}

// describe looks at a cluster: its ID and topics with partition counts.
func describe(ctx context.Context, a *ckafka.AdminClient, which, bootstrap string) (clusterState, error) {
	ctx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	unreachable := func(err error) error {
		return sdk.Retriable(fmt.Errorf("%w: %s cluster at %s: %v", ErrUnreachable, which, bootstrap, err))
	}
	timeout := time.Until(deadlineOf(ctx))
	md, err := a.GetMetadata(nil, true, max(int(timeout.Milliseconds()), 1))
	if err != nil {
		return clusterState{}, unreachable(err)
	}
	id, err := cachedClusterID(ctx, a)
	if err != nil {
		return clusterState{}, unreachable(err)
	}
	st := clusterState{id: id, topics: make(map[string]int, len(md.Topics))}
	for name, tm := range md.Topics {
		// A topic being deleted or created may report an error; count what
		// the broker knows and let the next refresh settle it.
		if len(tm.Partitions) == 0 {
			continue
		}
		st.topics[name] = len(tm.Partitions)
	}
	return st, nil
}

// clusterID asks a cluster for its ID.
//
// librdkafka's rd_kafka_clusterid (behind AdminClient.ClusterID) does not
// ask: it waits for a metadata response to change the client's metadata
// cache, checking for the ID outside the lock its wake-up is signalled
// under. A response that arrives in between, or one that changes no
// cached topic, leaves it waiting for its whole timeout with the ID
// already known (the likely cause of a connector start that timed out
// against a healthy broker in CI; not reproduced on demand). A metadata
// request of our own is answered, and caches the ID for the lookup after
// it.
func clusterID(ctx context.Context, a *ckafka.AdminClient) (string, error) {
	timeout := time.Until(deadlineOf(ctx))
	if _, err := a.GetMetadata(nil, false, max(int(timeout.Milliseconds()), 1)); err != nil {
		return "", err
	}
	return cachedClusterID(ctx, a)
}

// cachedClusterID reads the ID a metadata response has just cached.
func cachedClusterID(ctx context.Context, a *ckafka.AdminClient) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return a.ClusterID(ctx)
}

func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(discoveryTimeout)
}

// selection is the set of source topics to replicate, chosen from one look
// at the source cluster.
type selection struct {
	sources map[string]int // source topic → partition count
	// skipped are topics that matched topics.regex but are named like
	// target topics on the same cluster: copying them would loop.
	skipped []string
	// policySkipped are selected topics the replication policy never
	// replicates, as "topic (reason)": internal topics, and topics that
	// came from the target cluster (cycles).
	policySkipped []string
}

// selectTopics chooses the source topics per configuration. sameCluster
// means source and target are one cluster.
func selectTopics(cfg *Config, src clusterState, sameCluster bool) (selection, error) {
	if sameCluster && cfg.identityNames() {
		return selection{}, fmt.Errorf("%w: source and target are the same cluster (ID %s) and %s keeps topic names; use a format such as ${topic}.replica or DefaultReplicationPolicy",
			ErrSelfReplication, src.id, cfg.namingDescription())
	}
	candidates := map[string]int{}
	var missing []string
	if cfg.TopicsRegex != nil {
		for t, n := range src.topics {
			if !strings.HasPrefix(t, "__") && cfg.TopicsRegex.MatchString(t) {
				candidates[t] = n
			}
		}
	} else {
		for _, t := range cfg.Topics {
			n, ok := src.topics[t]
			if !ok {
				missing = append(missing, t)
				continue
			}
			candidates[t] = n
		}
	}
	if cfg.TopicsExclude != nil {
		for t := range candidates {
			if cfg.TopicsExclude.MatchString(t) {
				delete(candidates, t)
			}
		}
	}
	var policySkipped []string
	for t := range candidates {
		if why := cfg.policyExcludes(t); why != "" {
			policySkipped = append(policySkipped, fmt.Sprintf("%s (%s)", t, why))
			delete(candidates, t)
		}
	}
	slices.Sort(policySkipped)
	if len(missing) > 0 {
		slices.Sort(missing)
		return selection{}, sdk.Retriable(fmt.Errorf("%w: %s do not exist on the source cluster (ID %s); the connector retries until they exist",
			ErrMissingTopics, strings.Join(quoteAll(missing), ", "), src.id))
	}
	sel := selection{sources: candidates, policySkipped: policySkipped}
	if sameCluster {
		if cfg.TopicsRegex == nil {
			// A listed topic that is the target of another listed topic
			// would receive this connector's output and copy it again.
			for t := range candidates {
				for s := range candidates {
					if s != t && cfg.TargetTopic(s) == t {
						return selection{}, fmt.Errorf("%w: topic %q is listed in topics and is also the target of %q on the same cluster", ErrSelfReplication, t, s)
					}
				}
			}
		} else {
			// Any topic shaped like a target (even one whose source is gone)
			// is output of this kind of replication: reading it would copy
			// copies, without end.
			for t := range candidates {
				if cfg.isOwnOutput(t) {
					sel.skipped = append(sel.skipped, t)
					delete(sel.sources, t)
				}
			}
			slices.Sort(sel.skipped)
		}
	}
	if len(sel.sources) == 0 {
		if cfg.TopicsRegex != nil {
			return selection{}, sdk.Retriable(fmt.Errorf("%w: %s %q matches no topic on the source cluster (ID %s, %d topics); the connector retries until one exists",
				ErrNoTopics, KeyTopicsRegex, strings.TrimSuffix(strings.TrimPrefix(cfg.TopicsRegex.String(), "^(?:"), ")$"), src.id, len(src.topics)))
		}
		return selection{}, sdk.Retriable(fmt.Errorf("%w: every topic in %s is excluded by %s or the replication policy (%s)",
			ErrNoTopics, KeyTopics, KeyTopicsExclude, strings.Join(policySkipped, ", ")))
	}
	return sel, nil
}

// targetPlan is what ensureTargets did or found.
type targetPlan struct {
	counts  map[string]int // target topic → partition count after the call
	created []string
	grown   []string
}

// ensureTargets makes sure every selected source topic has its target
// topic: missing targets are created with the source's partition count;
// under preserve, a target the connector has seen with enough partitions
// before (verified) is grown when its source grew, and any other target
// with fewer partitions than its source is refused with ErrTargetTooSmall.
//
// synced holds each source topic's configs to copy (sync.topic.configs.enabled);
// created targets get them, overlaid with target.topic.config.*.
func ensureTargets(ctx context.Context, cfg *Config, a *ckafka.AdminClient, dst clusterState, sources map[string]int, verified map[string]bool, synced topicConfigs) (targetPlan, error) {
	plan := targetPlan{counts: map[string]int{}}
	var create []ckafka.TopicSpecification
	var grow []ckafka.PartitionsSpecification
	var tooSmall []string
	for _, src := range slices.Sorted(maps.Keys(sources)) {
		n := sources[src]
		tgt := cfg.TargetTopic(src)
		m, exists := dst.topics[tgt]
		switch {
		case !exists:
			create = append(create, ckafka.TopicSpecification{
				Topic: tgt, NumPartitions: n, ReplicationFactor: int(cfg.TargetReplication), Config: createConfig(cfg, synced[src]),
			})
		case cfg.Mapping == MappingPreserve && m < n && verified[tgt]:
			grow = append(grow, ckafka.PartitionsSpecification{Topic: tgt, IncreaseTo: n})
		case cfg.Mapping == MappingPreserve && m < n:
			tooSmall = append(tooSmall, fmt.Sprintf("%q has %d partitions but source topic %q has %d", tgt, m, src, n))
		default:
			plan.counts[tgt] = m
		}
	}
	if len(tooSmall) > 0 {
		return plan, fmt.Errorf("%w: target %s; partition.mapping=preserve writes each record to its source partition's number, "+
			"so add partitions to the target topic (kafka-topics --alter --partitions), choose other target names (%s), or use partition.mapping=key-hash",
			ErrTargetTooSmall, strings.Join(tooSmall, "; "), cfg.namingDescription())
	}
	opCtx, cancel := context.WithTimeout(ctx, discoveryTimeout)
	defer cancel()
	if len(create) > 0 {
		res, err := a.CreateTopics(opCtx, create, ckafka.SetAdminOperationTimeout(discoveryTimeout))
		if err != nil {
			return plan, sdk.Retriable(fmt.Errorf("%w: creating target topics: %v", ErrUnreachable, err))
		}
		for i, r := range res {
			switch r.Error.Code() {
			case ckafka.ErrNoError:
				plan.created = append(plan.created, r.Topic)
				plan.counts[r.Topic] = create[i].NumPartitions
			case ckafka.ErrTopicAlreadyExists:
				// Created concurrently (by an operator, or by this
				// connector's previous instance whose request timed out):
				// look at what exists and apply the rules to it.
				m, err := partitionCount(a, r.Topic)
				if err != nil {
					return plan, sdk.Retriable(fmt.Errorf("%w: describing target topic %q: %v", ErrUnreachable, r.Topic, err))
				}
				if cfg.Mapping == MappingPreserve && m < create[i].NumPartitions {
					return plan, fmt.Errorf("%w: target %q has %d partitions but its source has %d (created concurrently)",
						ErrTargetTooSmall, r.Topic, m, create[i].NumPartitions)
				}
				plan.counts[r.Topic] = m
			default:
				return plan, fmt.Errorf("creating target topic %q with %d partitions (replication factor %d): %w",
					r.Topic, create[i].NumPartitions, cfg.TargetReplication, r.Error)
			}
		}
	}
	if len(grow) > 0 {
		res, err := a.CreatePartitions(opCtx, grow, ckafka.SetAdminOperationTimeout(discoveryTimeout))
		if err != nil {
			return plan, sdk.Retriable(fmt.Errorf("%w: adding partitions to target topics: %v", ErrUnreachable, err))
		}
		for i, r := range res {
			if c := r.Error.Code(); c != ckafka.ErrNoError && c != ckafka.ErrInvalidPartitions {
				return plan, fmt.Errorf("adding partitions to target topic %q (to %d): %w", r.Topic, grow[i].IncreaseTo, r.Error)
			}
			plan.grown = append(plan.grown, r.Topic)
			plan.counts[r.Topic] = grow[i].IncreaseTo
		}
	}
	// The controller has accepted the new topics and partitions, but the
	// brokers' metadata follows a moment later; tasks given the new
	// partitions before then would be refused them as unknown.
	if err := awaitPartitionCounts(opCtx, a, plan, append(plan.created, plan.grown...)); err != nil {
		return plan, err
	}
	return plan, nil
}

// awaitPartitionCounts waits until the metadata shows every topic in
// topics with at least plan.counts[topic] partitions.
func awaitPartitionCounts(ctx context.Context, a *ckafka.AdminClient, plan targetPlan, topics []string) error {
	for _, topic := range topics {
		want := plan.counts[topic]
		for {
			n, err := partitionCount(a, topic)
			if err == nil && n >= want {
				break
			}
			select {
			case <-ctx.Done():
				return sdk.Retriable(fmt.Errorf("target topic %q: the brokers' metadata does not show its %d partitions yet (last seen %d, error %v)",
					topic, want, n, err))
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

func partitionCount(a *ckafka.AdminClient, topic string) (int, error) {
	md, err := a.GetMetadata(&topic, false, int(discoveryTimeout.Milliseconds()))
	if err != nil {
		return 0, err
	}
	tm, ok := md.Topics[topic]
	if !ok || len(tm.Partitions) == 0 {
		return 0, fmt.Errorf("topic %q not in metadata: %v", topic, tm.Error)
	}
	return len(tm.Partitions), nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
