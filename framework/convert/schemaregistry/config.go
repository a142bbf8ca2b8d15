package schemaregistry

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/rest"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
)

// Class names, as Confluent's converters are called in Kafka Connect.
const (
	AvroClass = "io.confluent.connect.avro.AvroConverter"
)

// Configuration keys (the converter's sub-keys), as Confluent names them.
const (
	URLConfig               = "schema.registry.url"
	CredentialsSourceConfig = "basic.auth.credentials.source"
	UserInfoConfig          = "basic.auth.user.info"
	AutoRegisterConfig      = "auto.register.schemas"
	UseLatestConfig         = "use.latest.version"
	KeyStrategyConfig       = "key.subject.name.strategy"
	ValueStrategyConfig     = "value.subject.name.strategy"
)

// Subject name strategies; Confluent's class names are accepted too.
const (
	TopicNameStrategy       = "TopicNameStrategy"
	RecordNameStrategy      = "RecordNameStrategy"
	TopicRecordNameStrategy = "TopicRecordNameStrategy"
	strategyPackage         = "io.confluent.kafka.serializers.subject."
)

// Infos returns the converter classes of this package, for a convert.Set.
func Infos() []convert.Info {
	return []convert.Info{
		{
			Class: AvroClass, Aliases: []string{"AvroConverter"},
			Summary: "Confluent Avro with a Schema Registry (wire format: magic byte, schema id).",
			Record:  true,
			New:     func() convert.Converter { return &AvroConverter{} },
			Def:     Def,
		},
		{
			Class: ProtobufClass, Aliases: []string{"ProtobufConverter"},
			Summary: "Confluent Protobuf with a Schema Registry (wire format: magic byte, schema id, message indexes).",
			Record:  true,
			New:     func() convert.Converter { return &ProtobufConverter{} },
			Def:     Def,
		},
		{
			Class: JSONSchemaClass, Aliases: []string{"JsonSchemaConverter"},
			Summary: "Confluent JSON Schema with a Schema Registry (wire format: magic byte, schema id).",
			Record:  true,
			New:     func() convert.Converter { return &JSONSchemaConverter{} },
			Def:     Def,
		},
	}
}

func strategyValidator() configdef.Validator {
	return configdef.OneOf(TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy,
		strategyPackage+TopicNameStrategy, strategyPackage+RecordNameStrategy, strategyPackage+TopicRecordNameStrategy)
}

// Def is the configuration definition the Schema Registry converters share.
func Def() *configdef.Def {
	return configdef.New().
		Define(configdef.Key{Name: convert.TypeConfig, Type: configdef.String, Required: true,
			Validator: configdef.OneOf("key", "value", "header"), Importance: configdef.Low,
			Documentation: "How this converter will be used."}).
		Define(configdef.Key{Name: URLConfig, Type: configdef.List, Required: true, Importance: configdef.High,
			Documentation: "Comma-separated list of Schema Registry URLs; requests go to the first that answers."}).
		Define(configdef.Key{Name: CredentialsSourceConfig, Type: configdef.String, Default: "URL",
			Validator: configdef.OneOf("URL", "USER_INFO"), Importance: configdef.Medium,
			Documentation: "Where basic-auth credentials come from: URL (user:password@ in schema.registry.url) or USER_INFO (basic.auth.user.info)."}).
		Define(configdef.Key{Name: UserInfoConfig, Type: configdef.Password, Default: "", Importance: configdef.Medium,
			Documentation: "user:password for basic auth when basic.auth.credentials.source=USER_INFO."}).
		Define(configdef.Key{Name: AutoRegisterConfig, Type: configdef.Boolean, Default: true, Importance: configdef.Medium,
			Documentation: "Register the schema derived from each record's Connect schema under its subject; false looks up its id instead."}).
		Define(configdef.Key{Name: UseLatestConfig, Type: configdef.Boolean, Default: false, Importance: configdef.Low,
			Documentation: "Serialize with the subject's latest registered schema (with auto.register.schemas=false)."}).
		Define(configdef.Key{Name: KeyStrategyConfig, Type: configdef.String, Default: TopicNameStrategy,
			Validator: strategyValidator(), Importance: configdef.Medium,
			Documentation: "Subject of key schemas: TopicNameStrategy (<topic>-key), RecordNameStrategy (<record name>) or TopicRecordNameStrategy (<topic>-<record name>); Confluent's class names are accepted."}).
		Define(configdef.Key{Name: ValueStrategyConfig, Type: configdef.String, Default: TopicNameStrategy,
			Validator: strategyValidator(), Importance: configdef.Medium,
			Documentation: "Subject of value schemas: TopicNameStrategy (<topic>-value), RecordNameStrategy or TopicRecordNameStrategy; Confluent's class names are accepted."})
}

// settings are the parsed keys.
type settings struct {
	urls         string
	client       *schemaregistry.Config
	autoRegister bool
	useLatest    bool
	strategy     string
}

// connect parses a converter's settings and opens its registry client; it
// also returns whether the serde works on keys or values.
func connect(props map[string]string, isKey bool) (settings, schemaregistry.Client, serde.Type, error) {
	s, err := parse(props, isKey)
	if err != nil {
		return settings{}, nil, 0, err
	}
	client, err := schemaregistry.NewClient(s.client)
	if err != nil {
		return settings{}, nil, 0, fmt.Errorf("schema registry client for %s: %w", s.urls, err)
	}
	st := serde.ValueSerde
	if isKey {
		st = serde.KeySerde
	}
	return s, client, st, nil
}

func parse(props map[string]string, isKey bool) (settings, error) {
	p := make(map[string]string, len(props)+1)
	for k, v := range props {
		p[k] = v
	}
	if _, ok := p[convert.TypeConfig]; !ok {
		p[convert.TypeConfig] = map[bool]string{true: "key", false: "value"}[isKey]
	}
	v, err := Def().Parse(p)
	if err != nil {
		return settings{}, err
	}
	var urls []string
	for _, u := range v.List(URLConfig) {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		return settings{}, configdef.Invalid(URLConfig, "", "at least one Schema Registry URL is required")
	}
	s := settings{urls: strings.Join(urls, ", "), autoRegister: v.Bool(AutoRegisterConfig), useLatest: v.Bool(UseLatestConfig)}
	cc := schemaregistry.NewConfig(strings.Join(urls, ","))
	// The task retries a registry that does not answer (see wrapRegistry),
	// so the client itself gives up quickly rather than blocking a poll.
	cc.MaxRetries = 1
	cc.RequestTimeoutMs = 5000
	cc.ConnectionTimeoutMs = 5000
	cc.BasicAuthCredentialsSource = v.String(CredentialsSourceConfig)
	if cc.BasicAuthCredentialsSource == "USER_INFO" {
		if sec, ok := v.Get(UserInfoConfig).(configdef.Secret); ok {
			cc.BasicAuthUserInfo = sec.Value()
		}
		if !strings.Contains(cc.BasicAuthUserInfo, ":") {
			return settings{}, configdef.Invalid(UserInfoConfig, "[hidden]", "must be user:password with basic.auth.credentials.source=USER_INFO")
		}
	}
	s.client = cc
	key := ValueStrategyConfig
	if isKey {
		key = KeyStrategyConfig
	}
	s.strategy = strings.TrimPrefix(v.String(key), strategyPackage)
	if s.useLatest && s.autoRegister {
		return settings{}, configdef.Invalid(UseLatestConfig, "true", "use.latest.version=true needs auto.register.schemas=false")
	}
	return s, nil
}

// subjectStrategy returns the subject name function for the strategy;
// recordName extracts the record's full name from a schema.
//
// The serde also asks for the subject without a schema (when it frames
// with a known id, and when reading): hint then names the record being
// written. It is empty when reading, where the subject only matters for
// rules and reader schemas, which the converters do not use: the topic's
// subject is given then.
func subjectStrategy(strategy string, recordName func(schemaregistry.SchemaInfo) (string, error), hint *string) serde.SubjectNameStrategyFunc {
	name := func(topic string, st serde.Type, info schemaregistry.SchemaInfo) (string, bool, error) {
		if info.Schema != "" {
			n, err := recordName(info)
			return n, true, err
		}
		if *hint != "" {
			return *hint, true, nil
		}
		n, err := serde.TopicNameStrategy(topic, st, info)
		return n, false, err
	}
	switch strategy {
	case RecordNameStrategy:
		return func(topic string, st serde.Type, info schemaregistry.SchemaInfo) (string, error) {
			n, _, err := name(topic, st, info)
			return n, err
		}
	case TopicRecordNameStrategy:
		return func(topic string, st serde.Type, info schemaregistry.SchemaInfo) (string, error) {
			n, isRecord, err := name(topic, st, info)
			if err != nil || !isRecord {
				return n, err
			}
			return topic + "-" + n, nil
		}
	}
	return serde.TopicNameStrategy
}

// classify turns a serde or client error into what the framework acts on:
// registry answers about the data (unknown id, incompatible schema) are
// data errors for errors.tolerance and the dead-letter queue; a registry
// that does not answer is retriable, naming the URLs; a refusal of the
// credentials fails the task.
func classify(urls, op string, err error) error {
	var re *rest.Error
	if errors.As(err, &re) {
		// error_code is an HTTP status or a Confluent code such as 40403.
		status := re.Code
		for status >= 1000 {
			status /= 10
		}
		switch {
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return fmt.Errorf("schema registry %s refused the credentials while %s: %d %s: %w", urls, op, re.Code, re.Message, err)
		case status >= 500:
			return sdk.Retriable(fmt.Errorf("schema registry %s unavailable while %s: %w", urls, op, err))
		}
		if re.Code == 0 {
			return &data.Error{Msg: fmt.Sprintf("schema registry %s refused %s: %s", urls, op, re.Message)}
		}
		return &data.Error{Msg: fmt.Sprintf("schema registry %s refused %s: error %d: %s", urls, op, re.Code, re.Message)}
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) || strings.Contains(err.Error(), "failed to send request after") {
		return sdk.Retriable(fmt.Errorf("schema registry %s unreachable while %s: %w", urls, op, err))
	}
	return &data.Error{Msg: fmt.Sprintf("%s: %v", op, err)}
}
