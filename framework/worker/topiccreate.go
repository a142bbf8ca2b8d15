package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/connconfig"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkaadmin"
	"github.com/connectd/connectd/plugins/host"
)

// topicCallTimeout bounds each admin call of the topic check.
const topicCallTimeout = 30 * time.Second

// MissingTopicError fails a source task that is about to write to topics
// that do not exist and that it may not create.
type MissingTopicError struct {
	Topics []string
	// Reason says why the task did not create them.
	Reason string
}

func (e *MissingTopicError) Error() string {
	what := "topic " + e.Topics[0] + " does not exist"
	if len(e.Topics) > 1 {
		what = "topics " + strings.Join(e.Topics, ", ") + " do not exist"
	}
	return fmt.Sprintf("%s and this task does not create topics (%s): create the topic, or let the task create it "+
		"by setting topic.creation.default.replication.factor and topic.creation.default.partitions in the connector config "+
		"(with topic.creation.enable=true on the workers, the default); then restart the task", what, e.Reason)
}

// TopicCreateError fails a source task whose topic creation the cluster
// refused.
type TopicCreateError struct {
	Topic string
	Group string
	Err   error
}

func (e *TopicCreateError) Error() string {
	return fmt.Sprintf("task failed to create topic %s (topic creation group %s): %v; ensure that the task is authorized to create topics "+
		"(the connector's admin client, admin.override.*) and that the group's settings suit the cluster, or create the topic, and restart the task",
		e.Topic, e.Group, e.Err)
}

func (e *TopicCreateError) Unwrap() error { return e.Err }

// topicCreator makes sure the topics a source task writes to exist before
// the task produces to them (KIP-158). The topics of a poll batch that
// the task has not written to yet are checked with one request before
// the batch's first record is produced; a topic that exists, or that the
// task created, is remembered, so later batches cost a comparison or a
// map lookup per record. A topic that already exists is left as it is.
//
// Without topic creation (topic.creation.enable=false on the worker, or
// no topic.creation.* key in the connector config) a missing topic fails
// the task at once, naming it, unless the brokers create topics
// themselves (auto.create.topics.enable), which Kafka Connect relies on
// in that case too. Producing to a missing topic would otherwise leave
// the task RUNNING while librdkafka waits for the topic to appear and
// every transaction aborts.
type topicCreator struct {
	w         *Worker
	connProps map[string]string
	log       *slog.Logger
	tm        *taskMetrics

	spec *connconfig.TopicCreation // nil: this task creates no topics
	off  string                    // why spec is nil

	known map[string]bool
	last  string
}

func newTopicCreator(w *Worker, t *taskRuntime) (*topicCreator, error) {
	c := &topicCreator{w: w, connProps: t.connProps, log: t.log, tm: t.tm, known: map[string]bool{}}
	switch {
	case w.cfg.DisableTopicCreation:
		c.off = "the worker's topic.creation.enable is false"
	case !connconfig.UsesTopicCreation(t.connProps):
		c.off = "the connector config has no topic.creation.* settings"
	default:
		spec, err := connconfig.ParseTopicCreation(t.connProps)
		if err != nil {
			return nil, fmt.Errorf("topic creation settings: %w", err)
		}
		c.spec = spec
	}
	return c, nil
}

// ensure returns once the topics of recs exist (or the brokers will
// create them), or the error that must fail the task.
func (c *topicCreator) ensure(ctx context.Context, recs []host.SourceRecord) error {
	var unknown []string
	var seen map[string]bool // the unknown ones, for batches naming many topics
	for i := range recs {
		topic := recs[i].Topic
		if topic == c.last || topic == "" { // an empty topic is the producer's to refuse
			continue
		}
		if c.known[topic] {
			c.last = topic
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		if !seen[topic] {
			seen[topic] = true
			unknown = append(unknown, topic)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	if err := c.check(ctx, unknown); err != nil {
		// The records cannot be written: counted like a record that failed
		// on its way to Kafka.
		c.tm.recordError(sdk.StageKafkaProduce, "")
		return err
	}
	for _, topic := range unknown {
		c.known[topic] = true
	}
	return nil
}

// forget drops what the task knows about its topics, so that the next
// batches check them again: after an aborted transaction, which a topic
// deleted under the task causes, the task then fails naming the topic (or
// creates it again) instead of aborting until it gives up.
func (c *topicCreator) forget() {
	clear(c.known)
	c.last = ""
}

// check makes sure topics exist. Its admin client lives for one check:
// checks are rare (a task's first batch, a new topic), and a client per
// task held for the task's life would keep librdkafka threads and broker
// connections for nothing.
func (c *topicCreator) check(ctx context.Context, topics []string) error {
	admin, err := c.w.newAdmin(c.connProps)
	if err != nil {
		return fmt.Errorf("admin client for topic checks: %w", err)
	}
	defer admin.Close()
	missing, err := missingTopics(ctx, admin.AdminClient, topics)
	if err != nil {
		return fmt.Errorf("checking whether topics %s exist: %w", strings.Join(topics, ", "), err)
	}
	if len(missing) == 0 {
		return nil
	}
	if c.spec == nil {
		auto, err := brokerAutoCreates(ctx, admin.AdminClient)
		if err == nil && auto {
			c.log.Info("topics do not exist; the broker creates them when the task writes to them (auto.create.topics.enable)",
				"topics", missing, "reason", c.off)
			return nil
		}
		reason := c.off
		if err != nil {
			reason += "; whether the brokers create topics themselves could not be checked: " + err.Error()
		} else {
			reason += ", and the brokers' auto.create.topics.enable is false"
		}
		return &MissingTopicError{Topics: missing, Reason: reason}
	}
	specs := make([]kafka.TopicSpecification, len(missing))
	groups := map[string]*connconfig.TopicCreationGroup{}
	for i, topic := range missing {
		g := c.spec.GroupFor(topic)
		groups[topic] = g
		specs[i] = kafka.TopicSpecification{Topic: topic, NumPartitions: int(g.Partitions), ReplicationFactor: int(g.ReplicationFactor), Config: g.Configs}
	}
	cctx, cancel := context.WithTimeout(ctx, topicCallTimeout)
	defer cancel()
	res, err := admin.CreateTopics(cctx, specs)
	if err != nil {
		return &TopicCreateError{Topic: missing[0], Group: groups[missing[0]].Name, Err: err}
	}
	for _, r := range res {
		g := groups[r.Topic]
		switch r.Error.Code() {
		case kafka.ErrNoError:
			c.log.Info("created topic", "topic", r.Topic, "group", g.Name, "partitions", g.Partitions,
				"replication_factor", g.ReplicationFactor, "configs", renderConfigs(g.Configs))
		case kafka.ErrTopicAlreadyExists:
			// Another task (or anyone) created it meanwhile: left as it is.
			c.log.Info("found existing topic", "topic", r.Topic)
		default:
			return &TopicCreateError{Topic: r.Topic, Group: g.Name, Err: r.Error}
		}
	}
	return nil
}

// missingTopics returns those of topics that do not exist. DescribeTopics
// never creates a topic, unlike a producer's metadata request on a broker
// with auto.create.topics.enable.
func missingTopics(ctx context.Context, admin *kafka.AdminClient, topics []string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, topicCallTimeout)
	defer cancel()
	if err := kafkaadmin.Reachable(ctx, admin); err != nil {
		return nil, err
	}
	res, err := admin.DescribeTopics(ctx, kafka.NewTopicCollectionOfTopicNames(topics))
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, d := range res.TopicDescriptions {
		switch d.Error.Code() {
		case kafka.ErrNoError:
		case kafka.ErrUnknownTopicOrPart, kafka.ErrUnknownTopic:
			missing = append(missing, d.Name)
		default:
			return nil, fmt.Errorf("topic %s: %w", d.Name, d.Error)
		}
	}
	return missing, nil
}

// brokerAutoCreates reads auto.create.topics.enable from one broker (the
// setting is cluster-wide in practice).
func brokerAutoCreates(ctx context.Context, admin *kafka.AdminClient) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, topicCallTimeout)
	defer cancel()
	cl, err := admin.DescribeCluster(ctx)
	if err != nil {
		return false, fmt.Errorf("describe cluster: %w", err)
	}
	if len(cl.Nodes) == 0 {
		return false, errors.New("describe cluster: no brokers")
	}
	res, err := admin.DescribeConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceBroker, Name: strconv.Itoa(cl.Nodes[0].ID)}})
	if err != nil {
		return false, fmt.Errorf("describe broker configs: %w", err)
	}
	if len(res) == 0 || res[0].Error.Code() != kafka.ErrNoError {
		if len(res) > 0 {
			return false, fmt.Errorf("describe broker configs: %w", res[0].Error)
		}
		return false, errors.New("describe broker configs: no result")
	}
	e, ok := res[0].Config["auto.create.topics.enable"]
	if !ok {
		return false, errors.New("describe broker configs: auto.create.topics.enable not reported")
	}
	return strings.EqualFold(e.Value, "true"), nil
}

func renderConfigs(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

// checkTopicCreation reports a source connector's topic.creation.* errors
// for Validate; none when the worker does not create topics, as Kafka
// Connect ignores the keys then.
func (w *Worker) checkTopicCreation(t sdk.Type, props map[string]string) []*configdef.ConfigError {
	if t != sdk.Source || w.cfg.DisableTopicCreation {
		return nil
	}
	return connconfig.TopicCreationErrors(props)
}

// addTopicCreationError reports a topic.creation.* error in Kafka
// Connect's shape: once (topic.creation.groups is already validated by
// the connector definition, so its errors may be there), and on a per-group
// key with the definition Kafka's TopicCreationConfig gives it and the
// value the config set.
func addTopicCreationError(r *configdef.ValidationResult, props map[string]string, ce *configdef.ConfigError) {
	for i := range r.Configs {
		if r.Configs[i].Value.Name == ce.Key {
			if !slices.Contains(r.Configs[i].Value.Errors, ce.Message) {
				r.Configs[i].Value.Errors = append(r.Configs[i].Value.Errors, ce.Message)
				r.ErrorCount++
			}
			return
		}
	}
	ci := configdef.ConfigInfo{Value: configdef.ConfigValue{
		Name: ce.Key, Errors: []string{ce.Message}, RecommendedValues: []string{}, Visible: true,
	}}
	if v, ok := props[ce.Key]; ok {
		ci.Value.Value = &v
	}
	if info, ok := connconfig.TopicCreationKeyInfo(ce.Key); ok {
		ci.Definition = &info
		if info.Group != nil && !slices.Contains(r.Groups, *info.Group) {
			r.Groups = append(r.Groups, *info.Group)
		}
	}
	r.Configs = append(r.Configs, ci)
	r.ErrorCount++
}
