package connconfig

import (
	"regexp"
	"sort"
	"strings"

	"github.com/connectd/connectd/framework/configdef"
)

// Topic creation keys of source connectors (Kafka's SourceConnectorConfig
// and TopicCreationConfig, KIP-158). A group's keys are
// topic.creation.<group>.<key>; the group "default" always exists.
const (
	TopicCreationPrefix    = "topic.creation."
	KeyTopicCreationGroups = "topic.creation.groups"

	TopicCreationDefaultGroup = "default"

	TopicCreationInclude           = "include"
	TopicCreationExclude           = "exclude"
	TopicCreationReplicationFactor = "replication.factor"
	TopicCreationPartitions        = "partitions"

	// GroupTopicCreation is the validation group of topic.creation.groups;
	// each group's keys are in "Topic Creation: <group>".
	GroupTopicCreation = "Topic Creation"
)

const (
	includeDoc = "A list of regular expression literals used to match the topic names used by the source connector. " +
		"This list is used to include topics that should be created using the topic settings defined by this group " +
		"(RE2 syntax; the expressions are joined with | and must match the whole topic name)."
	excludeDoc = "A list of regular expression literals used to match the topic names used by the source connector. " +
		"This list is used to exclude topics from being created with the topic settings defined by this group. " +
		"Note that exclusion rules have precedent and override any inclusion rules for the topics."
	replicationDoc = "The replication factor for new topics created for this connector using this group. " +
		"This value may be -1 to use the broker's default replication factor, or may be a positive number not larger than the number of brokers in the Kafka cluster. " +
		"A value larger than the number of brokers in the Kafka cluster will result in an error when the new topic is created. " +
		"For the default group this configuration is required. For any other group defined in topic.creation.groups this config is optional and if it's missing it gets the value of the default group"
	partitionsDoc = "The number of partitions new topics created for this connector. " +
		"This value may be -1 to use the broker's default number of partitions, or a positive number representing the desired number of partitions. " +
		"For the default group this configuration is required. For any other group defined in topic.creation.groups this config is optional and if it's missing it gets the value of the default group"
)

// topicCreationGroupsKey is topic.creation.groups, part of CommonDef(Source).
func topicCreationGroupsKey() configdef.Key {
	return configdef.Key{Name: KeyTopicCreationGroups, Type: configdef.List, Default: "", Validator: configdef.UniqueList("topic creation groups"),
		Importance: configdef.Low, Documentation: "Groups of configurations for topics created by source connectors. " +
			"Each group has topic.creation.<group>.include, .exclude, .replication.factor, .partitions and any topic config (topic.creation.<group>.cleanup.policy, ...); " +
			"a new topic gets the settings of the first group that matches it, else those of the default group (topic.creation.default.*).",
		Group: GroupTopicCreation, OrderInGroup: 1, Width: configdef.WidthLong, DisplayName: "Topic Creation Groups"}
}

var replicationFactorValidator = configdef.Func("Positive number not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default",
	func(key string, v any) error {
		if n := v.(int16); n != -1 && n < 1 {
			return configdef.Invalid(key, v, "Replication factor must be positive and not larger than the number of brokers in the Kafka cluster, or -1 to use the broker's default")
		}
		return nil
	})

var partitionsValidator = configdef.Func("Positive number, or -1 to use the broker's default", func(key string, v any) error {
	if n := v.(int32); n != -1 && n < 1 {
		return configdef.Invalid(key, v, "Number of partitions must be positive, or -1 to use the broker's default")
	}
	return nil
})

var regexListValidator = configdef.Func("list of regular expressions", func(key string, v any) error {
	for _, s := range v.([]string) {
		if _, err := regexp.Compile(s); err != nil {
			return configdef.Invalid(key, v, "Syntax error in regular expression: "+err.Error())
		}
	}
	return nil
})

// topicCreationGroupDef is one group's keys (Kafka's
// TopicCreationConfig.configDef / defaultGroupConfigDef): the default
// group's replication factor and partitions are required, the other
// groups' default to the default group's.
func topicCreationGroupDef(group string, rf int16, partitions int32) *configdef.Def {
	display := GroupTopicCreation + ": " + group
	d := configdef.New()
	rfKey := configdef.Key{Name: TopicCreationReplicationFactor, Type: configdef.Short, Validator: replicationFactorValidator,
		Importance: configdef.Low, Documentation: replicationDoc, Width: configdef.WidthLong, DisplayName: "Replication Factor for Topics in " + display}
	partKey := configdef.Key{Name: TopicCreationPartitions, Type: configdef.Int, Validator: partitionsValidator,
		Importance: configdef.Low, Documentation: partitionsDoc, Width: configdef.WidthLong, DisplayName: "Partition Count for Topics in " + display}
	if group == TopicCreationDefaultGroup {
		rfKey.Required, partKey.Required = true, true
	} else {
		rfKey.Default, partKey.Default = rf, partitions
		d.Define(configdef.Key{Name: TopicCreationInclude, Type: configdef.List, Default: "", Validator: regexListValidator,
			Importance: configdef.Low, Documentation: includeDoc, Width: configdef.WidthLong, DisplayName: "Inclusion Topic Pattern for " + display})
		d.Define(configdef.Key{Name: TopicCreationExclude, Type: configdef.List, Default: "", Validator: regexListValidator,
			Importance: configdef.Low, Documentation: excludeDoc, Width: configdef.WidthLong, DisplayName: "Exclusion Topic Pattern for " + display})
	}
	return d.Define(rfKey).Define(partKey)
}

// TopicCreationKeyInfo is the definition of a per-group key
// (topic.creation.<group>.replication.factor, .partitions, .include or
// .exclude) as Kafka's TopicCreationConfig embeds it in group
// "Topic Creation: <group>", for validation answers that report an error
// on one; ok is false for any other name. A non-default group's replication
// factor and partitions default to the default group's, shown as -1 here.
func TopicCreationKeyInfo(name string) (configdef.KeyInfo, bool) {
	rest, ok := strings.CutPrefix(name, TopicCreationPrefix)
	if !ok {
		return configdef.KeyInfo{}, false
	}
	for _, k := range []string{TopicCreationReplicationFactor, TopicCreationPartitions, TopicCreationInclude, TopicCreationExclude} {
		group, found := strings.CutSuffix(rest, "."+k)
		if !found || group == "" || group == "groups" {
			continue
		}
		d := configdef.New().Embed(TopicCreationPrefix+group+".", GroupTopicCreation+": "+group, 0, topicCreationGroupDef(group, -1, -1))
		for _, key := range d.Keys() {
			if key.Name == name {
				return key.Info(), true
			}
		}
	}
	return configdef.KeyInfo{}, false
}

// UsesTopicCreation reports whether a source connector config asks for
// topic creation: as in Kafka Connect, any topic.creation.* key does
// (and then the default group's replication factor and partitions are
// required). Without one, the framework creates no topics for it.
func UsesTopicCreation(props map[string]string) bool {
	for k := range props {
		if strings.HasPrefix(k, TopicCreationPrefix) {
			return true
		}
	}
	return false
}

// TopicCreationGroup is one topic creation group of a connector.
type TopicCreationGroup struct {
	Name              string
	ReplicationFactor int16 // -1: the broker's default
	Partitions        int32 // -1: the broker's default
	// Configs are the group's other keys, passed to the new topic as
	// topic configs (cleanup.policy, retention.ms, ...).
	Configs map[string]string

	include, exclude *regexp.Regexp // nil include matches nothing, nil exclude excludes nothing
	all              bool           // the default group: every topic
}

// Matches reports whether topic belongs to the group: included and not
// excluded (exclusion wins), each list matched against the whole name.
func (g *TopicCreationGroup) Matches(topic string) bool {
	if g.all {
		return true
	}
	if g.exclude != nil && g.exclude.MatchString(topic) {
		return false
	}
	return g.include != nil && g.include.MatchString(topic)
}

// TopicCreation is a connector's topic creation settings: Groups in the
// order of topic.creation.groups, then the default group.
type TopicCreation struct {
	Groups []*TopicCreationGroup
}

// GroupFor returns the group whose settings a new topic gets: the first
// listed group that matches it, else the default group.
func (tc *TopicCreation) GroupFor(topic string) *TopicCreationGroup {
	for _, g := range tc.Groups {
		if g.Matches(topic) {
			return g
		}
	}
	return tc.Groups[len(tc.Groups)-1]
}

// ParseTopicCreation parses a source connector's topic.creation.* keys
// with Kafka Connect's rules: nil when the config has none (no topic
// creation for this connector); the default group's replication factor
// and partitions are required; "default" listed in topic.creation.groups
// is dropped (it always exists, last); the default group's include and
// exclude are ignored (it takes every topic no other group took). Errors
// are configdef.Errors naming the keys.
func ParseTopicCreation(props map[string]string) (*TopicCreation, error) {
	if !UsesTopicCreation(props) {
		return nil, nil
	}
	var errs configdef.Errors
	groupsDef := configdef.New().Define(topicCreationGroupsKey())
	gv, err := groupsDef.Parse(props)
	if err != nil {
		errs = append(errs, err.(configdef.Errors)...)
	}
	defaultPrefix := TopicCreationPrefix + TopicCreationDefaultGroup + "."
	dv, err := configdef.New().Embed(defaultPrefix, GroupTopicCreation+": "+TopicCreationDefaultGroup, 0,
		topicCreationGroupDef(TopicCreationDefaultGroup, 0, 0)).Parse(props)
	if err != nil {
		// The other groups' defaults come from the default group: without
		// valid ones their own keys cannot be checked either.
		return nil, append(errs, err.(configdef.Errors)...)
	}
	def := &TopicCreationGroup{Name: TopicCreationDefaultGroup, all: true,
		ReplicationFactor: dv.Short(defaultPrefix + TopicCreationReplicationFactor),
		Partitions:        dv.Int(defaultPrefix + TopicCreationPartitions),
		Configs:           otherConfigs(props, defaultPrefix)}
	tc := &TopicCreation{}
	var names []string
	if gv != nil {
		names = gv.List(KeyTopicCreationGroups)
	}
	seen := map[string]bool{TopicCreationDefaultGroup: true}
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		prefix := TopicCreationPrefix + name + "."
		v, err := configdef.New().Embed(prefix, GroupTopicCreation+": "+name, 0,
			topicCreationGroupDef(name, def.ReplicationFactor, def.Partitions)).Parse(props)
		if err != nil {
			errs = append(errs, err.(configdef.Errors)...)
			continue
		}
		g := &TopicCreationGroup{Name: name,
			ReplicationFactor: v.Short(prefix + TopicCreationReplicationFactor),
			Partitions:        v.Int(prefix + TopicCreationPartitions),
			Configs:           otherConfigs(props, prefix),
			include:           anchored(v.List(prefix + TopicCreationInclude)),
			exclude:           anchored(v.List(prefix + TopicCreationExclude)),
		}
		tc.Groups = append(tc.Groups, g)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	tc.Groups = append(tc.Groups, def)
	return tc, nil
}

// TopicCreationErrors is ParseTopicCreation's errors as a list, for
// validation answers.
func TopicCreationErrors(props map[string]string) []*configdef.ConfigError {
	_, err := ParseTopicCreation(props)
	if err == nil {
		return nil
	}
	errs, ok := err.(configdef.Errors)
	if !ok {
		return []*configdef.ConfigError{{Key: KeyTopicCreationGroups, Message: err.Error()}}
	}
	return errs
}

// anchored joins regular expressions (already validated) into one that
// must match a whole name, as Java's Pattern.matcher(...).matches() does;
// nil for an empty list.
func anchored(list []string) *regexp.Regexp {
	var parts []string
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return regexp.MustCompile(`^(?:` + strings.Join(parts, "|") + `)$`)
}

// otherConfigs are a group's keys besides include, exclude,
// replication.factor and partitions: the new topic's configs.
func otherConfigs(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	var keys []string
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok || rest == "" {
			continue
		}
		switch rest {
		case TopicCreationInclude, TopicCreationExclude, TopicCreationReplicationFactor, TopicCreationPartitions:
			continue
		}
		out[rest] = props[k]
	}
	return out
}
