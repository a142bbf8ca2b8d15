// Package connconfig owns the configuration keys every connector has —
// Kafka Connect's names, defaults, groups, documentation and validation for
// name, connector.class, tasks.max, the converters, transforms and
// predicates, errors.*, the sink keys (topics, topics.regex, the
// dead-letter queue) and the source keys (topic.creation.groups,
// exactly.once.support, transaction.boundary, offsets.storage.topic) —
// and whole-config validation: Validate answers PUT /connector-plugins/{p}/config/validate
// exactly as Kafka's ConfigInfos, including the per-alias keys of each
// transform and predicate (validated with the transform's own definition,
// as Kafka's enriched ConfigDef does), the converters' own settings, the
// connector's own keys and its Validate method. Parse and ParseErrorPolicy
// give the worker the parsed settings.
//
// Connector-specific keys the definitions do not know are allowed, as in
// Kafka; UnknownKeys lists them, each with the nearest defined key, for
// the worker to warn about when it accepts the config. The validate answer
// does not list them: Kafka's ConfigInfos has no place for a warning, and
// an error would refuse a config Kafka Connect accepts. PASSWORD values
// are rendered "[hidden]".
//
// Not validated here, because it depends on the worker, not the config:
// whether the worker has exactly-once source support enabled, and client
// overrides (producer.override.* and friends), which are passed through.
// The topic.creation.<group>.* keys are checked by ParseTopicCreation,
// which the worker calls: they apply only when the worker's
// topic.creation.enable is true.
//
// What this package must not do: run connectors or talk to Kafka; it only
// reads configuration.
package connconfig
