package kafka

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/kafkaadmin"
)

// Topic config sync (sync.topic.configs.enabled), as MirrorMaker 2's
// MirrorSourceConnector does it: the configs set explicitly on a source
// topic travel to its target topic, at creation and on every refresh.
//
// Only configs whose source is the topic itself (DYNAMIC_TOPIC_CONFIG) are
// copied: a broker's or cluster's defaults describe the source cluster, not
// the topic, and the target cluster keeps its own (MM2's
// use.defaults.from=target). Keys matching config.properties.exclude are
// never copied (MM2's defaults: throttling, timestamp type and difference,
// unclean leader election, min.insync.replicas, which are operational
// choices of each cluster), nor are keys set by target.topic.config.*: the
// operator's explicit choice for the target wins. Configs set only on the
// target are left alone (an incremental SET, never a DELETE), so a target
// that already exists with other settings keeps them except where the
// source sets the same key.

// configSyncTimeout bounds each config request. It is shorter than
// discoveryTimeout because Start runs a sync after its look at both
// clusters, all within the host's call timeout (30 s by default), and a
// config that waits for the next refresh costs little.
const configSyncTimeout = 5 * time.Second

// topicConfigs is topic → config name → value.
type topicConfigs map[string]map[string]string

// explicitTopicConfigs reads the configs set on each of topics, without
// the keys cfg never syncs. Sensitive values (never returned by the
// broker) are skipped.
func explicitTopicConfigs(ctx context.Context, cfg *Config, a *ckafka.AdminClient, topics []string) (topicConfigs, error) {
	res, err := describeTopicConfigs(ctx, a, topics)
	if err != nil {
		return nil, err
	}
	out := topicConfigs{}
	for topic, entries := range res {
		m := map[string]string{}
		for name, e := range entries {
			if e.Source != ckafka.ConfigSourceDynamicTopic || e.IsSensitive || cfg.excludedConfig(name) {
				continue
			}
			if _, overridden := cfg.TargetTopicConfig[name]; overridden {
				continue
			}
			m[name] = e.Value
		}
		out[topic] = m
	}
	return out, nil
}

// describeTopicConfigs returns every config entry of each topic, in one
// request. A topic the broker cannot describe (deleted meanwhile) is left
// out.
func describeTopicConfigs(ctx context.Context, a *ckafka.AdminClient, topics []string) (map[string]map[string]ckafka.ConfigEntryResult, error) {
	out := map[string]map[string]ckafka.ConfigEntryResult{}
	if len(topics) == 0 {
		return out, nil
	}
	rs := make([]ckafka.ConfigResource, len(topics))
	for i, t := range topics {
		rs[i] = ckafka.ConfigResource{Type: ckafka.ResourceTopic, Name: t}
	}
	ctx, cancel := context.WithTimeout(ctx, configSyncTimeout)
	defer cancel()
	if err := kafkaadmin.Reachable(ctx, a); err != nil {
		return nil, fmt.Errorf("describing the configs of %d topics: %w", len(topics), err)
	}
	res, err := a.DescribeConfigs(ctx, rs, ckafka.SetAdminRequestTimeout(configSyncTimeout))
	if err != nil {
		return nil, fmt.Errorf("describing the configs of %d topics: %w", len(topics), err)
	}
	for _, r := range res {
		if r.Error.Code() != ckafka.ErrNoError {
			continue
		}
		out[r.Name] = r.Config
	}
	return out, nil
}

// createConfig is the config of a target topic created for a source topic:
// the source's synced configs overlaid with target.topic.config.*.
func createConfig(cfg *Config, synced map[string]string) map[string]string {
	if len(synced) == 0 {
		return cfg.TargetTopicConfig
	}
	out := maps.Clone(synced)
	maps.Copy(out, cfg.TargetTopicConfig)
	return out
}

// configChange is one target topic's configs to set.
type configChange struct {
	target string
	set    map[string]string
}

// plannedConfigChanges compares each existing target topic's configs with
// its source's synced configs and returns what differs.
func plannedConfigChanges(want map[string]map[string]string, have map[string]map[string]ckafka.ConfigEntryResult) []configChange {
	var out []configChange
	for _, target := range slices.Sorted(maps.Keys(want)) {
		cur, ok := have[target]
		if !ok {
			continue // not describable now; the next refresh tries again
		}
		set := map[string]string{}
		for k, v := range want[target] {
			if e, ok := cur[k]; !ok || e.Value != v {
				set[k] = v
			}
		}
		if len(set) > 0 {
			out = append(out, configChange{target: target, set: set})
		}
	}
	return out
}

// syncTopicConfigs brings existing target topics' configs in line with
// their sources' (want: target topic → synced configs). It returns the
// topics it changed and, per topic, why a change was refused; a refusal is
// not fatal to replication.
func syncTopicConfigs(ctx context.Context, a *ckafka.AdminClient, want map[string]map[string]string) (changed []configChange, refused map[string]string, err error) {
	have, err := describeTopicConfigs(ctx, a, slices.Sorted(maps.Keys(want)))
	if err != nil {
		return nil, nil, err
	}
	changes := plannedConfigChanges(want, have)
	if len(changes) == 0 {
		return nil, nil, nil
	}
	rs := make([]ckafka.ConfigResource, len(changes))
	for i, ch := range changes {
		r := ckafka.ConfigResource{Type: ckafka.ResourceTopic, Name: ch.target}
		for _, k := range slices.Sorted(maps.Keys(ch.set)) {
			r.Config = append(r.Config, ckafka.ConfigEntry{Name: k, Value: ch.set[k], IncrementalOperation: ckafka.AlterConfigOpTypeSet})
		}
		rs[i] = r
	}
	ctx, cancel := context.WithTimeout(ctx, configSyncTimeout)
	defer cancel()
	if err := kafkaadmin.Reachable(ctx, a); err != nil {
		return nil, nil, fmt.Errorf("altering the configs of %d target topics: %w", len(rs), err)
	}
	res, err := a.IncrementalAlterConfigs(ctx, rs, ckafka.SetAdminRequestTimeout(configSyncTimeout))
	if err != nil {
		return nil, nil, fmt.Errorf("altering the configs of %d target topics: %w", len(rs), err)
	}
	refused = map[string]string{}
	byName := map[string]configChange{}
	for _, ch := range changes {
		byName[ch.target] = ch
	}
	for _, r := range res {
		if r.Error.Code() != ckafka.ErrNoError {
			refused[r.Name] = fmt.Sprintf("setting %s: %v", formatConfigs(byName[r.Name].set), r.Error)
			continue
		}
		changed = append(changed, byName[r.Name])
	}
	return changed, refused, nil
}

// formatConfigs renders configs as k=v pairs in key order, for logs.
func formatConfigs(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}
