// Package replpolicy names topics across clusters the way MirrorMaker 2's
// replication policies do, so that replicas, offset syncs, checkpoints and
// heartbeats written by connectd sit where MM2 tools and users look for them.
//
// A Policy maps a source topic to its remote (target) name, reads the origin
// cluster back out of a remote name, and names the internal topics. Its
// topic-source lookups drive cycle detection: an active/active pair never
// replicates a topic back to the cluster it came from.
//
// What it must not do: talk to a cluster, or hold state beyond its
// configuration; callers own topic creation and filtering.
package replpolicy

import (
	"errors"
	"fmt"
	"strings"
)

// The classes of MirrorMaker 2's policies; their simple names are accepted too.
const (
	DefaultClass  = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	IdentityClass = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"

	// DefaultSeparator is replication.policy.separator's default.
	DefaultSeparator = "."
	heartbeats       = "heartbeats"
	internalSuffix   = "internal"
)

// ErrUnknownClass is returned for a replication.policy.class that connectd
// does not implement (custom Java policies cannot run here).
var ErrUnknownClass = errors.New("unknown replication policy class")

// Policy is one of MM2's replication policies.
type Policy interface {
	// Class is the policy's MM2 class name.
	Class() string
	// RemoteTopic names topic of cluster sourceAlias on the other cluster.
	RemoteTopic(sourceAlias, topic string) string
	// TopicSource is the alias of the cluster a remote topic came from, or "".
	TopicSource(topic string) string
	// UpstreamTopic is the name topic had one hop upstream, or "" when it is
	// not a remote topic.
	UpstreamTopic(topic string) string
	// HeartbeatsTopic is the heartbeat connector's topic.
	HeartbeatsTopic() string
	// OffsetSyncsTopic is where syncs for replication to clusterAlias go.
	OffsetSyncsTopic(clusterAlias string) string
	// CheckpointsTopic is where checkpoints of groups of clusterAlias go.
	CheckpointsTopic(clusterAlias string) string
	// IsInternalTopic reports topics that are never replicated: Kafka's own
	// (__*, .*) and MM2's internal topics.
	IsInternalTopic(topic string) bool
}

// New returns the policy named by class (full or simple MM2 class name).
// sourceAlias is needed by IdentityReplicationPolicy, which cannot read the
// origin out of a topic name.
func New(class, separator, sourceAlias string) (Policy, error) {
	if separator == "" {
		return nil, errors.New("replication.policy.separator must not be empty")
	}
	d := defaultPolicy{sep: separator}
	switch class {
	case DefaultClass, "DefaultReplicationPolicy":
		return d, nil
	case IdentityClass, "IdentityReplicationPolicy":
		return identityPolicy{defaultPolicy: d, sourceAlias: sourceAlias}, nil
	}
	return nil, fmt.Errorf("%w %q: use %s or %s", ErrUnknownClass, class, DefaultClass, IdentityClass)
}

// OriginalTopic follows UpstreamTopic to the topic's name on its cluster of
// origin.
func OriginalTopic(p Policy, topic string) string {
	for range 64 { // a name cannot nest deeper than its length allows; bound it anyway
		up := p.UpstreamTopic(topic)
		if up == "" || up == topic {
			return topic
		}
		topic = up
	}
	return topic
}

// IsCycle reports whether replicating topic to targetAlias would send it
// back to a cluster it already came from.
func IsCycle(p Policy, topic, targetAlias string) bool {
	for range 64 {
		src := p.TopicSource(topic)
		switch {
		case src == "":
			return false
		case src == targetAlias:
			return true
		}
		up := p.UpstreamTopic(topic)
		if up == "" || up == topic {
			return false
		}
		topic = up
	}
	return false
}

type defaultPolicy struct{ sep string }

func (defaultPolicy) Class() string { return DefaultClass }

func (d defaultPolicy) RemoteTopic(sourceAlias, topic string) string {
	return sourceAlias + d.sep + topic
}

func (d defaultPolicy) TopicSource(topic string) string {
	src, _, ok := strings.Cut(topic, d.sep)
	if !ok {
		return ""
	}
	return src
}

func (d defaultPolicy) UpstreamTopic(topic string) string {
	_, rest, ok := strings.Cut(topic, d.sep)
	if !ok {
		return ""
	}
	return rest
}

func (defaultPolicy) HeartbeatsTopic() string { return heartbeats }

func (d defaultPolicy) OffsetSyncsTopic(clusterAlias string) string {
	return "mm2-offset-syncs" + d.sep + clusterAlias + d.sep + internalSuffix
}

func (d defaultPolicy) CheckpointsTopic(clusterAlias string) string {
	return clusterAlias + d.sep + "checkpoints" + d.sep + internalSuffix
}

func (d defaultPolicy) IsInternalTopic(topic string) bool {
	// MM2's internal topics (offset syncs, checkpoints, its Connect topics)
	// all end in .internal, or in <separator>internal.
	return strings.HasPrefix(topic, "__") || strings.HasPrefix(topic, ".") ||
		strings.HasSuffix(topic, d.sep+internalSuffix) || strings.HasSuffix(topic, ".internal")
}

// identityPolicy keeps topic names; only heartbeats are renamed, so that
// heartbeats still show the path they travelled.
type identityPolicy struct {
	defaultPolicy
	sourceAlias string
}

func (identityPolicy) Class() string { return IdentityClass }

func (p identityPolicy) isHeartbeats(topic string) bool {
	return OriginalTopic(p.defaultPolicy, topic) == heartbeats
}

func (p identityPolicy) RemoteTopic(sourceAlias, topic string) string {
	if p.isHeartbeats(topic) {
		return p.defaultPolicy.RemoteTopic(sourceAlias, topic)
	}
	return topic
}

func (p identityPolicy) TopicSource(topic string) string {
	if p.isHeartbeats(topic) {
		return p.defaultPolicy.TopicSource(topic)
	}
	return p.sourceAlias
}

func (p identityPolicy) UpstreamTopic(topic string) string {
	if p.isHeartbeats(topic) {
		return p.defaultPolicy.UpstreamTopic(topic)
	}
	return topic
}
