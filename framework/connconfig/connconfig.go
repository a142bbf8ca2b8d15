package connconfig

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/framework/transform"
)

// Common keys (Kafka's ConnectorConfig).
const (
	KeyName                     = "name"
	KeyConnectorClass           = "connector.class"
	KeyTasksMax                 = "tasks.max"
	KeyTasksMaxEnforce          = "tasks.max.enforce"
	KeyKeyConverter             = chain.KeyConverter
	KeyValueConverter           = chain.ValueConverter
	KeyHeaderConverter          = chain.HeaderConverter
	KeyTransforms               = transform.TransformsConfig
	KeyPredicates               = transform.PredicatesConfig
	KeyConfigActionReload       = "config.action.reload"
	KeyErrorsRetryTimeout       = "errors.retry.timeout"
	KeyErrorsRetryDelayMax      = "errors.retry.delay.max.ms"
	KeyErrorsTolerance          = "errors.tolerance"
	KeyErrorsLogEnable          = "errors.log.enable"
	KeyErrorsLogIncludeMessages = "errors.log.include.messages"
	// KeyPluginIsolation chooses the connector's plugin process on a
	// worker: IsolationPlugin (shared by every connector of the plugin
	// there) or IsolationConnector (its own). Unset: the worker's
	// plugin.isolation.
	KeyPluginIsolation = "plugin.isolation"
)

// Values of KeyPluginIsolation.
const (
	IsolationPlugin    = "plugin"
	IsolationConnector = "connector"
)

// Sink keys (Kafka's SinkConnectorConfig).
const (
	KeyTopics               = "topics"
	KeyTopicsRegex          = "topics.regex"
	KeyDLQTopic             = "errors.deadletterqueue.topic.name"
	KeyDLQReplicationFactor = "errors.deadletterqueue.topic.replication.factor"
	KeyDLQContextHeaders    = "errors.deadletterqueue.context.headers.enable"
)

// Source keys (Kafka's SourceConnectorConfig).
const (
	KeyExactlyOnceSupport          = "exactly.once.support"
	KeyTransactionBoundary         = "transaction.boundary"
	KeyTransactionBoundaryInterval = "transaction.boundary.interval.ms"
	KeyOffsetsStorageTopic         = "offsets.storage.topic"
)

// Groups, in Kafka's names.
const (
	GroupCommon       = "Common"
	GroupTransforms   = "Transforms"
	GroupPredicates   = "Predicates"
	GroupErrors       = "Error Handling"
	GroupExactlyOnce  = "Exactly Once Support"
	GroupOffsetsTopic = "offsets.topic"
)

// Values of enumerated keys.
const (
	ToleranceNone = "none"
	ToleranceAll  = "all"

	ExactlyOnceRequested = "requested"
	ExactlyOnceRequired  = "required"

	BoundaryPoll      = "poll"
	BoundaryInterval  = "interval"
	BoundaryConnector = "connector"
)

const converterDoc = "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. " +
	"This controls the format of the %s in messages written to or read from Kafka, and since this is independent of connectors it " +
	"allows any connector to work with any serialization format. Examples of common formats include JSON and Avro. " +
	"Unset: the worker's setting applies. Settings of the converter itself use this key as prefix (%s.schemas.enable)."

func classValidator(what string, header bool, set *convert.Set) configdef.Validator {
	known := set.KnownClasses(header)
	return configdef.Func("one of "+strings.Join(known, ", ")+" (or its short alias)", func(key string, v any) error {
		info, ok := set.Lookup(v.(string))
		if !ok || (header && !info.Header) || (!header && !info.Record) {
			return configdef.Invalid(key, v, "Class "+v.(string)+" could not be found; known "+what+": "+strings.Join(known, ", "))
		}
		return nil
	})
}

func classRecommender(header bool, set *convert.Set) configdef.Recommender {
	known := set.KnownClasses(header)
	vals := make([]any, len(known))
	for i, k := range known {
		vals[i] = k
	}
	return configdef.Recommend(vals...)
}

// CommonDef returns the keys every connector of type t has, with Kafka
// Connect's names, defaults, groups, orders and validators: the common
// keys, plus the sink keys for sdk.Sink or the source keys for sdk.Source.
func CommonDef(t sdk.Type) *configdef.Def { return CommonDefWith(t, nil) }

// CommonDefWith is CommonDef with the converter classes of set (nil: the
// built-ins) accepted and recommended for the converter keys.
func CommonDefWith(t sdk.Type, set *convert.Set) *configdef.Def {
	d := configdef.New().
		Define(configdef.Key{Name: KeyName, Type: configdef.String, Required: true, Validator: configdef.NonEmptyStringWithoutControlChars(),
			Importance: configdef.High, Documentation: "Globally unique name to use for this connector.",
			Group: GroupCommon, OrderInGroup: 1, Width: configdef.WidthMedium, DisplayName: "Connector name"}).
		Define(configdef.Key{Name: KeyConnectorClass, Type: configdef.String, Required: true, Importance: configdef.High,
			Documentation: "Name or alias of the class for this connector, as listed by GET /connector-plugins (for example DatagenSource).",
			Group:         GroupCommon, OrderInGroup: 2, Width: configdef.WidthLong, DisplayName: "Connector class"}).
		Define(configdef.Key{Name: KeyTasksMax, Type: configdef.Int, Default: 1, Validator: configdef.AtLeast(1), Importance: configdef.High,
			Documentation: "Maximum number of tasks to use for this connector.",
			Group:         GroupCommon, OrderInGroup: 3, Width: configdef.WidthShort, DisplayName: "Tasks max"}).
		Define(configdef.Key{Name: KeyTasksMaxEnforce, Type: configdef.Boolean, Default: true, Importance: configdef.Low,
			Documentation: "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. By default, connectors that generate too many tasks will fail, and existing sets of tasks that exceed the tasks.max property will also be failed. If this property is set to false, then connectors will be allowed to generate more than the maximum number of tasks, and existing sets of tasks that exceed the tasks.max property will be allowed to run. This property is deprecated and will be removed in an upcoming major release.",
			Group:         GroupCommon, OrderInGroup: 4, Width: configdef.WidthShort, DisplayName: "Enforce tasks max"}).
		Define(configdef.Key{Name: KeyKeyConverter, Type: configdef.Class, Validator: classValidator("converters", false, set),
			Recommender: classRecommender(false, set), Importance: configdef.Low,
			Documentation: fmt.Sprintf(converterDoc, "keys", KeyKeyConverter),
			Group:         GroupCommon, OrderInGroup: 5, Width: configdef.WidthShort, DisplayName: "Key converter class"}).
		Define(configdef.Key{Name: KeyValueConverter, Type: configdef.Class, Validator: classValidator("converters", false, set),
			Recommender: classRecommender(false, set), Importance: configdef.Low,
			Documentation: fmt.Sprintf(converterDoc, "values", KeyValueConverter),
			Group:         GroupCommon, OrderInGroup: 6, Width: configdef.WidthShort, DisplayName: "Value converter class"}).
		Define(configdef.Key{Name: KeyHeaderConverter, Type: configdef.Class, Validator: classValidator("header converters", true, set),
			Recommender: classRecommender(true, set), Importance: configdef.Low,
			Documentation: "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. " +
				"Unset: the worker's setting applies (by default org.apache.kafka.connect.storage.SimpleHeaderConverter). " +
				"connectd hands headers to connectors as raw bytes, so the class is validated but does not change them.",
			Group: GroupCommon, OrderInGroup: 7, Width: configdef.WidthShort, DisplayName: "Header converter class"}).
		Define(configdef.Key{Name: KeyTransforms, Type: configdef.List, Default: "", Validator: configdef.UniqueList("transformation aliases"),
			Importance: configdef.Low, Documentation: "Aliases for the transformations to be applied to records.",
			Group: GroupTransforms, OrderInGroup: 8, Width: configdef.WidthLong, DisplayName: "Transforms"}).
		Define(configdef.Key{Name: KeyPredicates, Type: configdef.List, Default: "", Validator: configdef.UniqueList("predicate aliases"),
			Importance: configdef.Low, Documentation: "Aliases for the predicates used by transformations.",
			Group: GroupPredicates, OrderInGroup: 9, Width: configdef.WidthLong, DisplayName: "Predicates"}).
		Define(configdef.Key{Name: KeyConfigActionReload, Type: configdef.String, Default: "restart", Validator: configdef.OneOf("none", "restart"),
			Importance: configdef.Low,
			Documentation: "The action that Connect should take on the connector when changes in external configuration providers result in a change in the connector's configuration properties. " +
				"A value of 'none' indicates that Connect will do nothing. A value of 'restart' indicates that Connect should restart/reload the connector with the updated configuration properties.",
			Group: GroupCommon, OrderInGroup: 10, Width: configdef.WidthMedium, DisplayName: "Reload Action"}).
		Define(configdef.Key{Name: KeyPluginIsolation, Type: configdef.String, Validator: configdef.OneOf(IsolationPlugin, IsolationConnector),
			Importance: configdef.Low,
			Documentation: "The plugin process that runs this connector and its tasks on each worker: 'plugin' shares one process with every connector of the same plugin (class and version) there; 'connector' gives it a process of its own, so that a crash of another connector's code cannot fail its tasks, at the cost of a process per connector. " +
				"Unset: the worker's plugin.isolation (default plugin) (connectd).",
			Group: GroupCommon, OrderInGroup: 11, Width: configdef.WidthShort, DisplayName: "Plugin process isolation"}).
		Define(configdef.Key{Name: KeyErrorsRetryTimeout, Type: configdef.Long, Default: 0, Validator: configdef.AtLeast(int64(-1)),
			Importance:    configdef.Medium,
			Documentation: "The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries.",
			Group:         GroupErrors, OrderInGroup: 1, Width: configdef.WidthMedium, DisplayName: "Retry Timeout for Errors"}).
		Define(configdef.Key{Name: KeyErrorsRetryDelayMax, Type: configdef.Long, Default: 60000, Validator: configdef.AtLeast(int64(0)),
			Importance:    configdef.Medium,
			Documentation: "The maximum duration in milliseconds between consecutive retry attempts. Jitter will be added to the delay once this limit is reached to prevent thundering herd issues.",
			Group:         GroupErrors, OrderInGroup: 2, Width: configdef.WidthMedium, DisplayName: "Maximum Delay Between Retries for Errors"}).
		Define(configdef.Key{Name: KeyErrorsTolerance, Type: configdef.String, Default: ToleranceNone, Validator: configdef.OneOf(ToleranceNone, ToleranceAll),
			Importance:    configdef.Medium,
			Documentation: "Behavior for tolerating errors during connector operation. 'none' is the default value and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records.",
			Group:         GroupErrors, OrderInGroup: 3, Width: configdef.WidthShort, DisplayName: "Error Tolerance"}).
		Define(configdef.Key{Name: KeyErrorsLogEnable, Type: configdef.Boolean, Default: false, Importance: configdef.Medium,
			Documentation: "If true, write each error and the details of the failed operation and problematic record to the Connect application log. This is 'false' by default, so that only errors that are not tolerated are reported.",
			Group:         GroupErrors, OrderInGroup: 4, Width: configdef.WidthShort, DisplayName: "Log Errors"}).
		Define(configdef.Key{Name: KeyErrorsLogIncludeMessages, Type: configdef.Boolean, Default: false, Importance: configdef.Medium,
			Documentation: "Whether to include in the log the Connect record that resulted in a failure. For sink records, the topic, partition, offset, and timestamp will be logged. For source records, the key and value (and their schemas), all headers, and the timestamp, Kafka topic, Kafka partition, source partition, and source offset will be logged. This is 'false' by default, which will prevent record keys, values, and headers from being written to log files.",
			Group:         GroupErrors, OrderInGroup: 5, Width: configdef.WidthShort, DisplayName: "Log Error Details"})

	switch t {
	case sdk.Sink:
		d.Define(configdef.Key{Name: KeyTopics, Type: configdef.List, Default: "", Importance: configdef.High,
			Documentation: "List of topics to consume, separated by commas",
			Group:         GroupCommon, OrderInGroup: 4, Width: configdef.WidthLong, DisplayName: "Topics"}).
			Define(configdef.Key{Name: KeyTopicsRegex, Type: configdef.String, Default: "", Validator: configdef.Regex(), Importance: configdef.High,
				Documentation: "Regular expression giving topics to consume (RE2 syntax, matched against the whole topic name). Only one of topics or topics.regex should be specified.",
				Group:         GroupCommon, OrderInGroup: 4, Width: configdef.WidthLong, DisplayName: "Topics regex"}).
			Define(configdef.Key{Name: KeyDLQTopic, Type: configdef.String, Default: "", Validator: configdef.TopicName(true), Importance: configdef.Medium,
				Documentation: "The name of the topic to be used as the dead letter queue (DLQ) for messages that result in an error when processed by this sink connector, or its transformations or converters. The topic name is blank by default, which means that no messages are to be recorded in the DLQ.",
				Group:         GroupErrors, OrderInGroup: 6, Width: configdef.WidthMedium, DisplayName: "Dead Letter Queue Topic Name"}).
			Define(configdef.Key{Name: KeyDLQReplicationFactor, Type: configdef.Short, Default: 3, Importance: configdef.Medium,
				Documentation: "Replication factor used to create the dead letter queue topic when it doesn't already exist.",
				Group:         GroupErrors, OrderInGroup: 7, Width: configdef.WidthMedium, DisplayName: "Dead Letter Queue Topic Replication Factor"}).
			Define(configdef.Key{Name: KeyDLQContextHeaders, Type: configdef.Boolean, Default: false, Importance: configdef.Medium,
				Documentation: "If true, add headers containing error context to the messages written to the dead letter queue. To avoid clashing with headers from the original record, all error context header keys, all error context header keys will start with <code>__connect.errors.</code>",
				Group:         GroupErrors, OrderInGroup: 8, Width: configdef.WidthMedium, DisplayName: "Enable Error Context Headers"})
	case sdk.Source:
		d.Define(topicCreationGroupsKey()).
			Define(configdef.Key{Name: KeyExactlyOnceSupport, Type: configdef.String, Default: ExactlyOnceRequested,
				Validator: configdef.OneOfIgnoreCase(ExactlyOnceRequested, ExactlyOnceRequired), Importance: configdef.Medium,
				Documentation: "Permitted values are requested, required. If set to \"required\", forces a preflight check for the connector to ensure that it can provide exactly-once semantics with the given configuration. " +
					"Some connectors may be capable of providing exactly-once semantics but not signal to Connect that they support this; in that case, documentation for the connector should be consulted carefully before creating it, and the value for this property should be set to \"requested\". " +
					"Additionally, if the value is set to \"required\" but the worker that performs preflight validation does not have exactly-once support enabled for source connectors, requests to create or validate the connector will fail.",
				Group: GroupExactlyOnce, OrderInGroup: 1, Width: configdef.WidthShort, DisplayName: "Exactly once support"}).
			Define(configdef.Key{Name: KeyTransactionBoundary, Type: configdef.String, Default: BoundaryPoll,
				Validator:  configdef.OneOfIgnoreCase(BoundaryPoll, BoundaryInterval, BoundaryConnector),
				Importance: configdef.Medium, Dependents: []string{KeyTransactionBoundaryInterval},
				Documentation: "Permitted values are: poll, interval, connector. If set to 'poll', a new producer transaction will be started and committed for every batch of records that each task from this connector provides to Connect. " +
					"If set to 'connector', relies on connector-defined transaction boundaries; note that not all connectors are capable of defining their own transaction boundaries, and in that case, attempts to instantiate a connector with this value will fail. " +
					"Finally, if set to 'interval', commits transactions only after a user-defined time interval has passed.",
				Group: GroupExactlyOnce, OrderInGroup: 2, Width: configdef.WidthShort, DisplayName: "Transaction Boundary"}).
			Define(configdef.Key{Name: KeyTransactionBoundaryInterval, Type: configdef.Long, Validator: configdef.AtLeast(int64(0)),
				Recommender: configdef.VisibleWhen(KeyTransactionBoundary, BoundaryInterval), Importance: configdef.Low,
				Documentation: "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. If unset, defaults to the value of the worker-level 'offset.flush.interval.ms' property. It has no effect if a different transaction.boundary is specified.",
				Group:         GroupExactlyOnce, OrderInGroup: 3, Width: configdef.WidthShort, DisplayName: "Transaction boundary interval"}).
			Define(configdef.Key{Name: KeyOffsetsStorageTopic, Type: configdef.String, Validator: configdef.TopicName(false), Importance: configdef.Low,
				Documentation: "The name of a separate offsets topic to use for this connector. If empty or not specified, the worker's global offsets topic name will be used. If specified, the offsets topic will be created if it does not already exist on the Kafka cluster targeted by this connector.",
				Group:         GroupOffsetsTopic, OrderInGroup: 1, Width: configdef.WidthLong, DisplayName: "Offsets topic"})
	}
	return d
}

// enrich adds the per-alias keys of the configured transforms and
// predicates to d (Kafka's ConnectorConfig.enrich): a required
// "<kind>.<alias>.type" key, and when its class is known, the class's own
// keys under "<kind>.<alias>." in group "Transforms: <alias>" or
// "Predicates: <alias>".
func enrich(d *configdef.Def, props map[string]string) {
	declaredPreds := listOf(props, KeyPredicates)
	for _, alias := range uniqueAliases(props, KeyTransforms) {
		prefix := KeyTransforms + "." + alias + "."
		group := GroupTransforms + ": " + alias
		d.Define(configdef.Key{Name: prefix + transform.TypeConfig, Type: configdef.Class, Required: true,
			Validator: configdef.Func("valid configs for "+alias+" transformation", func(key string, v any) error {
				if _, ok := transform.LookupTransformation(v.(string)); !ok {
					return configdef.Invalid(key, v, "Class "+v.(string)+" could not be found; known transformations: "+strings.Join(transform.TransformationAliases(), ", "))
				}
				return nil
			}),
			Recommender: transformRecommender(), Importance: configdef.High,
			Documentation: "Class for the '" + alias + "' transformation.", Group: group, OrderInGroup: 0,
			Width: configdef.WidthLong, DisplayName: "Transformation type for " + alias})
		implicit := configdef.New().
			Define(configdef.Key{Name: transform.PredicateConfig, Type: configdef.String, Importance: configdef.Medium,
				Validator: configdef.Func("one of the aliases in predicates", func(key string, v any) error {
					if !slices.Contains(declaredPreds, v.(string)) {
						return configdef.Invalid(key, v, "Predicate alias "+v.(string)+" is not listed in "+KeyPredicates)
					}
					return nil
				}),
				Documentation: "The alias of a predicate used to determine whether to apply this transformation."}).
			Define(configdef.Key{Name: transform.NegateConfig, Type: configdef.Boolean, Default: false, Importance: configdef.Medium,
				Documentation: "Whether the configured predicate should be negated."})
		if info, ok := transform.LookupTransformation(props[prefix+transform.TypeConfig]); ok {
			for _, k := range info.New().Def().Keys() {
				if k.Name == transform.PredicateConfig || k.Name == transform.NegateConfig {
					continue // the implicit keys mask the transformation's own
				}
				implicit.Define(k)
			}
		}
		d.Embed(prefix, group, 1, implicit)
	}
	for _, alias := range uniqueAliases(props, KeyPredicates) {
		prefix := KeyPredicates + "." + alias + "."
		group := GroupPredicates + ": " + alias
		d.Define(configdef.Key{Name: prefix + transform.TypeConfig, Type: configdef.Class, Required: true,
			Validator: configdef.Func("valid configs for "+alias+" predicate", func(key string, v any) error {
				if _, ok := transform.LookupPredicate(v.(string)); !ok {
					return configdef.Invalid(key, v, "Class "+v.(string)+" could not be found; known predicates: "+strings.Join(transform.PredicateAliases(), ", "))
				}
				return nil
			}),
			Recommender: predicateRecommender(), Importance: configdef.High,
			Documentation: "Class for the '" + alias + "' predicate.", Group: group, OrderInGroup: 0,
			Width: configdef.WidthLong, DisplayName: "Predicate type for " + alias})
		if info, ok := transform.LookupPredicate(props[prefix+transform.TypeConfig]); ok {
			d.Embed(prefix, group, 1, info.New().Def())
		}
	}
}

func transformRecommender() configdef.Recommender {
	var vals []any
	for _, t := range transform.Transformations() {
		vals = append(vals, t.Class)
	}
	return configdef.Recommend(vals...)
}

func predicateRecommender() configdef.Recommender {
	var vals []any
	for _, p := range transform.Predicates() {
		vals = append(vals, p.Class)
	}
	return configdef.Recommend(vals...)
}

func listOf(props map[string]string, key string) []string {
	v, _ := configdef.ParseValue(key, configdef.List, props[key])
	l, _ := v.([]string)
	return l
}

func uniqueAliases(props map[string]string, key string) []string {
	var out []string
	for _, a := range listOf(props, key) {
		if a != "" && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// EnrichedDef is CommonDef(t) plus the per-alias keys of the transforms and
// predicates that props configure.
func EnrichedDef(t sdk.Type, props map[string]string) *configdef.Def {
	return EnrichedDefWith(t, props, nil)
}

// EnrichedDefWith is EnrichedDef with the converter classes of set.
func EnrichedDefWith(t sdk.Type, props map[string]string, set *convert.Set) *configdef.Def {
	d := CommonDefWith(t, set)
	enrich(d, props)
	return d
}

// values is a list of ConfigValues with lookup by name.
type values struct {
	list  []configdef.ConfigValue
	index map[string]int
}

func newValues(vs []configdef.ConfigValue) *values {
	v := &values{index: map[string]int{}}
	for _, cv := range vs {
		v.add(cv)
	}
	return v
}

func (v *values) add(cv configdef.ConfigValue) {
	if i, ok := v.index[cv.Name]; ok {
		v.list[i] = cv // later definitions win, as in Kafka's result map
		return
	}
	v.index[cv.Name] = len(v.list)
	v.list = append(v.list, cv)
}

func (v *values) addError(name, msg string) {
	i, ok := v.index[name]
	if !ok {
		v.add(configdef.ConfigValue{Name: name, RecommendedValues: []string{}, Errors: []string{}, Visible: true})
		i = v.index[name]
	}
	v.list[i].Errors = append(v.list[i].Errors, msg)
}

func (v *values) hasErrors(name string) bool {
	i, ok := v.index[name]
	return ok && len(v.list[i].Errors) > 0
}

func (v *values) value(name string) *string {
	if i, ok := v.index[name]; ok {
		return v.list[i].Value
	}
	return nil
}

// Validate validates a whole connector config the way Kafka Connect's
// AbstractHerder.validateConnectorConfig does, and returns Kafka's
// ConfigInfos: the common keys, the transforms/predicates keys enriched
// with each class's own definition, the sink or source cross-key rules,
// the connector's own keys (Spec().Config) and, when those have no errors,
// the connector's Validate; then the settings of the converters the config
// names. Unknown keys are allowed. PASSWORD values are rendered "[hidden]".
//
// defaults are the worker's converter settings: a config that names no
// key.converter or value.converter is valid only if the worker has one.
func Validate(ctx context.Context, c sdk.Connector, props map[string]string, defaults chain.Defaults) configdef.ValidationResult {
	return ValidateWith(ctx, nil, c, props, defaults)
}

// ValidateWith is Validate with the converter classes of set (nil: the
// built-ins), as the plugin process that runs the tasks knows them.
func ValidateWith(ctx context.Context, set *convert.Set, c sdk.Connector, props map[string]string, defaults chain.Defaults) configdef.ValidationResult {
	spec := c.Spec()
	defaults = defaults.For(spec)
	enriched := EnrichedDefWith(spec.Type, props, set)
	vals := newValues(enriched.Validate(props))

	validateNegate(props, vals)
	switch spec.Type {
	case sdk.Sink:
		validateSink(props, vals)
	case sdk.Source:
		validateSource(spec, vals)
	}
	for _, role := range []string{KeyKeyConverter, KeyValueConverter} {
		if _, ok := chain.ResolveConverter(role, props, defaults); !ok && !vals.hasErrors(role) {
			vals.addError(role, fmt.Sprintf("No %s configured: set %s in the connector config or the worker config to one of %s",
				role, role, strings.Join(set.KnownClasses(false), ", ")))
		}
	}

	keys := enriched.Keys()
	groups := enriched.Groups()
	if spec.Config != nil {
		own := spec.Config.Validate(props)
		ownErrors := false
		for _, cv := range own {
			ownErrors = ownErrors || len(cv.Errors) > 0
			vals.add(cv)
		}
		for _, k := range spec.Config.Keys() {
			if i := slices.IndexFunc(keys, func(e configdef.Key) bool { return e.Name == k.Name }); i >= 0 {
				keys[i] = k // a connector key of the same name replaces the common one, as in Kafka
			} else {
				keys = append(keys, k)
			}
		}
		for _, g := range spec.Config.Groups() {
			if !slices.Contains(groups, g) {
				groups = append(groups, g)
			}
		}
		if !ownErrors {
			connectorValidate(ctx, c, props, vals)
		}
	} else {
		connectorValidate(ctx, c, props, vals)
	}

	name := strings.TrimSpace(props[KeyConnectorClass])
	if name == "" {
		name = spec.Class
	}
	result := configdef.Result(name, keys, groups, vals.list)
	for _, role := range []string{KeyHeaderConverter, KeyKeyConverter, KeyValueConverter} {
		if r, ok := converterResult(role, props, vals, set); ok {
			result.Merge(r)
		}
	}
	return result
}

// connectorValidate runs the connector's own cross-key checks; a panic is
// reported as an error rather than taking the plugin down with it.
func connectorValidate(ctx context.Context, c sdk.Connector, props map[string]string, vals *values) {
	defer func() {
		if r := recover(); r != nil {
			vals.addError(KeyConnectorClass, fmt.Sprintf("An unexpected error occurred during validation: the connector's Validate panicked: %v", r))
		}
	}()
	for _, fe := range c.Validate(ctx, props) {
		key := fe.Key
		if key == "" {
			key = KeyConnectorClass
		}
		vals.addError(key, fe.Message)
	}
}

// converterResult validates the settings of a converter that the
// connector config names (Kafka's validateConverterConfig): only when the
// class itself is valid.
func converterResult(role string, props map[string]string, vals *values, set *convert.Set) (configdef.ValidationResult, bool) {
	class, ok := props[role]
	if !ok || strings.TrimSpace(class) == "" || vals.hasErrors(role) {
		return configdef.ValidationResult{}, false
	}
	info, ok := set.Lookup(class)
	if !ok {
		return configdef.ValidationResult{}, false
	}
	def := info.Def()
	sub := map[string]string{}
	for k, v := range props {
		if strings.HasPrefix(k, role+".") {
			sub[k[len(role)+1:]] = v
		}
	}
	if _, set := sub[convert.TypeConfig]; !set {
		sub[convert.TypeConfig] = strings.TrimSuffix(role, ".converter")
	}
	return configdef.PrefixedResult(def.Keys(), def.Validate(sub), role+"."), true
}

// validateNegate reports transforms.<alias>.negate without a predicate.
func validateNegate(props map[string]string, vals *values) {
	for _, alias := range uniqueAliases(props, KeyTransforms) {
		prefix := KeyTransforms + "." + alias + "."
		_, hasNegate := props[prefix+transform.NegateConfig]
		_, hasPred := props[prefix+transform.PredicateConfig]
		if hasNegate && !hasPred {
			vals.addError(prefix+transform.NegateConfig, "Config '"+prefix+transform.NegateConfig+
				"' was provided but there is no config '"+prefix+transform.PredicateConfig+"' defining a predicate to be negated.")
		}
	}
}

// validateSink applies Kafka's SinkConnectorConfig.validate rules.
func validateSink(props map[string]string, vals *values) {
	topics := strings.TrimSpace(props[KeyTopics])
	regex := strings.TrimSpace(props[KeyTopicsRegex])
	dlq := strings.TrimSpace(props[KeyDLQTopic])
	hasTopics, hasRegex := topics != "", regex != ""
	if hasTopics && hasRegex {
		msg := KeyTopics + " and " + KeyTopicsRegex + " are mutually exclusive options, but both are set."
		vals.addError(KeyTopics, msg)
		vals.addError(KeyTopicsRegex, msg)
	}
	if !hasTopics && !hasRegex {
		msg := "Must configure one of " + KeyTopics + " or " + KeyTopicsRegex
		vals.addError(KeyTopics, msg)
		vals.addError(KeyTopicsRegex, msg)
	}
	if dlq == "" {
		return
	}
	if hasTopics {
		list := topicList(props)
		if slices.Contains(list, dlq) {
			vals.addError(KeyTopics, fmt.Sprintf("The DLQ topic '%s' may not be included in the list of topics ('%s=[%s]') consumed by the connector",
				dlq, KeyTopics, strings.Join(list, ", ")))
		}
	}
	if hasRegex {
		if re, err := regexp.Compile(`^(?:` + regex + `)$`); err == nil && re.MatchString(dlq) {
			vals.addError(KeyTopicsRegex, fmt.Sprintf("The DLQ topic '%s' may not be matched by the regex for the topics ('%s=%s') consumed by the connector",
				dlq, KeyTopicsRegex, regex))
		}
	}
}

// topicList is topics without empty entries and duplicates.
func topicList(props map[string]string) []string {
	var out []string
	for _, t := range listOf(props, KeyTopics) {
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// validateSource applies the preflight checks of Kafka's DistributedHerder
// that depend on the connector: exactly.once.support=required needs a
// connector that supports exactly-once, transaction.boundary=connector one
// that defines its own boundaries.
func validateSource(spec sdk.Spec, vals *values) {
	if !vals.hasErrors(KeyExactlyOnceSupport) && strings.EqualFold(deref(vals.value(KeyExactlyOnceSupport)), ExactlyOnceRequired) && !spec.ExactlyOnce {
		vals.addError(KeyExactlyOnceSupport, "The connector does not support exactly-once semantics with the provided configuration.")
	}
	if !vals.hasErrors(KeyTransactionBoundary) && strings.EqualFold(deref(vals.value(KeyTransactionBoundary)), BoundaryConnector) && !spec.DefinesTransactionBoundaries {
		vals.addError(KeyTransactionBoundary, "The connector does not support connector-defined transaction boundaries with the given configuration. "+
			"Please reconfigure it to use a different transaction boundary definition.")
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Infinite is ErrorPolicy.RetryTimeout for errors.retry.timeout=-1.
const Infinite time.Duration = -1

// ErrorPolicy is the errors.* policy of a connector (used by the worker on
// the host side too).
type ErrorPolicy struct {
	Tolerance            string        // ToleranceNone or ToleranceAll
	RetryTimeout         time.Duration // 0: no retries; Infinite (-1): retry forever
	RetryDelayMax        time.Duration
	LogEnable            bool
	LogIncludeMessages   bool
	DLQTopic             string // "" when there is no dead-letter queue; only sinks have one
	DLQReplicationFactor int16
	DLQContextHeaders    bool
}

func errorDef() *configdef.Def {
	d := configdef.New()
	for _, k := range CommonDef(sdk.Sink).Keys() {
		if k.Group == GroupErrors {
			d.Define(k)
		}
	}
	return d
}

// ParseErrorPolicy parses the errors.* keys (including the dead-letter
// queue keys, which only sinks use). Errors are configdef.Errors naming
// the keys.
func ParseErrorPolicy(props map[string]string) (ErrorPolicy, error) {
	v, err := errorDef().Parse(props)
	if err != nil {
		return ErrorPolicy{}, err
	}
	return errorPolicyOf(v), nil
}

func errorPolicyOf(v *configdef.Values) ErrorPolicy {
	p := ErrorPolicy{
		Tolerance:            v.String(KeyErrorsTolerance),
		RetryTimeout:         time.Duration(v.Long(KeyErrorsRetryTimeout)) * time.Millisecond,
		RetryDelayMax:        time.Duration(v.Long(KeyErrorsRetryDelayMax)) * time.Millisecond,
		LogEnable:            v.Bool(KeyErrorsLogEnable),
		LogIncludeMessages:   v.Bool(KeyErrorsLogIncludeMessages),
		DLQTopic:             strings.TrimSpace(v.String(KeyDLQTopic)),
		DLQReplicationFactor: v.Short(KeyDLQReplicationFactor),
		DLQContextHeaders:    v.Bool(KeyDLQContextHeaders),
	}
	if v.Long(KeyErrorsRetryTimeout) == -1 {
		p.RetryTimeout = Infinite
	}
	return p
}

// Common is the parsed common configuration of a connector.
type Common struct {
	Name            string
	ConnectorClass  string
	TasksMax        int
	TasksMaxEnforce bool
	Transforms      []string
	Predicates      []string
	Errors          ErrorPolicy

	// Sink only.
	Topics      []string // without empty entries and duplicates
	TopicsRegex string   // "" when topics is used

	// Source only.
	ExactlyOnceSupport  string // ExactlyOnceRequested or ExactlyOnceRequired
	TransactionBoundary string // BoundaryPoll, BoundaryInterval or BoundaryConnector
	// TransactionBoundaryInterval is 0 when unset: the worker's
	// offset.flush.interval.ms applies.
	TransactionBoundaryInterval time.Duration
	OffsetsTopic                string // "" for the worker's offsets topic
}

// Parse parses the common keys of a connector of type t, with the same
// rules as Validate for them (sink topics/topics.regex/DLQ rules
// included). Errors are configdef.Errors naming the keys.
func Parse(t sdk.Type, props map[string]string) (*Common, error) {
	v, err := CommonDef(t).Parse(props)
	var errs configdef.Errors
	if err != nil {
		errs = err.(configdef.Errors)
	}
	if t == sdk.Sink {
		vals := newValues(nil)
		validateSink(props, vals)
		for _, cv := range vals.list {
			for _, m := range cv.Errors {
				errs = append(errs, &configdef.ConfigError{Key: cv.Name, Message: m})
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	c := &Common{
		Name:            v.String(KeyName),
		ConnectorClass:  v.String(KeyConnectorClass),
		TasksMax:        int(v.Int(KeyTasksMax)),
		TasksMaxEnforce: v.Bool(KeyTasksMaxEnforce),
		Transforms:      v.List(KeyTransforms),
		Predicates:      v.List(KeyPredicates),
		Errors: ErrorPolicy{
			Tolerance:          v.String(KeyErrorsTolerance),
			RetryTimeout:       time.Duration(v.Long(KeyErrorsRetryTimeout)) * time.Millisecond,
			RetryDelayMax:      time.Duration(v.Long(KeyErrorsRetryDelayMax)) * time.Millisecond,
			LogEnable:          v.Bool(KeyErrorsLogEnable),
			LogIncludeMessages: v.Bool(KeyErrorsLogIncludeMessages),
		},
	}
	if v.Long(KeyErrorsRetryTimeout) == -1 {
		c.Errors.RetryTimeout = Infinite
	}
	switch t {
	case sdk.Sink:
		c.Errors = errorPolicyOf(v)
		c.Topics = topicList(props)
		c.TopicsRegex = strings.TrimSpace(v.String(KeyTopicsRegex))
	case sdk.Source:
		c.ExactlyOnceSupport = strings.ToLower(v.String(KeyExactlyOnceSupport))
		c.TransactionBoundary = strings.ToLower(v.String(KeyTransactionBoundary))
		if !v.IsNull(KeyTransactionBoundaryInterval) {
			c.TransactionBoundaryInterval = time.Duration(v.Long(KeyTransactionBoundaryInterval)) * time.Millisecond
		}
		if !v.IsNull(KeyOffsetsStorageTopic) {
			c.OffsetsTopic = v.String(KeyOffsetsStorageTopic)
		}
	}
	return c, nil
}
