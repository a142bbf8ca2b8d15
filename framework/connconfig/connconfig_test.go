package connconfig

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/sdk"
)

// testConnector is a real, minimal connector type: a Spec with its own
// keys and a Validate with one cross-key rule.
type testConnector struct {
	spec      sdk.Spec
	validated int
	panics    bool
}

func (c *testConnector) Spec() sdk.Spec { return c.spec }
func (c *testConnector) Validate(_ context.Context, props map[string]string) []sdk.FieldError {
	c.validated++
	if c.panics {
		panic("boom")
	}
	if props["mode"] == "upsert" && props["key.field"] == "" {
		return []sdk.FieldError{{Key: "key.field", Message: "key.field is required when mode is upsert"}}
	}
	return nil
}
func (c *testConnector) Start(context.Context, sdk.ConnectorContext, map[string]string) error {
	return nil
}
func (c *testConnector) TaskConfigs(context.Context, int) ([]map[string]string, error) {
	return nil, nil
}
func (c *testConnector) Stop(context.Context) error { return nil }

func sinkConnector() *testConnector {
	return &testConnector{spec: sdk.Spec{
		Class: "TestSink", Type: sdk.Sink,
		Config: configdef.New().
			Define(configdef.Key{Name: "hosts", Type: configdef.List, Required: true, Group: "Connection", Documentation: "Hosts."}).
			Define(configdef.Key{Name: "password", Type: configdef.Password, Group: "Connection"}).
			Define(configdef.Key{Name: "mode", Type: configdef.String, Default: "insert", Validator: configdef.OneOf("insert", "upsert"), Group: "Writes"}).
			Define(configdef.Key{Name: "key.field", Type: configdef.String, Default: "", Group: "Writes"}),
	}}
}

func sourceConnector(eos, boundaries bool) *testConnector {
	return &testConnector{spec: sdk.Spec{Class: "TestSource", Type: sdk.Source, ExactlyOnce: eos, DefinesTransactionBoundaries: boundaries,
		Config: configdef.New().Define(configdef.Key{Name: "kafka.topic", Type: configdef.String, Required: true})}}
}

var workerDefaults = chain.Defaults{
	"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
}

func goodSink() map[string]string {
	return map[string]string{
		"name": "s1", "connector.class": "TestSink", "tasks.max": "2", "topics": "a,b", "hosts": "h1:3000",
		"password": "hunter2", "some.unknown.key": "allowed",
	}
}

func errorsOf(r configdef.ValidationResult) map[string][]string {
	out := map[string][]string{}
	for _, c := range r.Configs {
		if len(c.Value.Errors) > 0 {
			out[c.Value.Name] = c.Value.Errors
		}
	}
	return out
}

func TestCommonDefMatchesKafka(t *testing.T) {
	d := CommonDef(sdk.Sink)
	k, _ := d.Key(KeyTasksMax)
	j, _ := json.Marshal(k.Info())
	want := `{"name":"tasks.max","type":"INT","required":false,"default_value":"1","importance":"HIGH","documentation":"Maximum number of tasks to use for this connector.","group":"Common","order":3,"width":"SHORT","display_name":"Tasks max","dependents":[]}`
	if string(j) != want {
		t.Errorf("tasks.max =\n%s\nwant\n%s", j, want)
	}
	defaults := map[string]*string{
		KeyName: nil, KeyConnectorClass: nil, KeyTasksMaxEnforce: ptr("true"), KeyKeyConverter: nil, KeyTransforms: ptr(""),
		KeyConfigActionReload: ptr("restart"), KeyErrorsRetryTimeout: ptr("0"), KeyErrorsRetryDelayMax: ptr("60000"),
		KeyErrorsTolerance: ptr("none"), KeyTopics: ptr(""), KeyTopicsRegex: ptr(""), KeyDLQTopic: ptr(""),
		KeyDLQReplicationFactor: ptr("3"), KeyDLQContextHeaders: ptr("false"),
	}
	for name, w := range defaults {
		k, ok := d.Key(name)
		if !ok {
			t.Errorf("sink def lacks %s", name)
			continue
		}
		got := k.Info().DefaultValue
		if (got == nil) != (w == nil) || (got != nil && *got != *w) {
			t.Errorf("%s default = %v, want %v", name, deref(got), deref(w))
		}
	}
	if got := CommonDef(sdk.Sink).Groups(); !reflect.DeepEqual(got, []string{"Common", "Transforms", "Predicates", "Error Handling"}) {
		t.Errorf("sink groups = %v", got)
	}
	if got := CommonDef(sdk.Source).Groups(); !reflect.DeepEqual(got, []string{"Common", "Transforms", "Predicates", "Error Handling", "Topic Creation", "Exactly Once Support", "offsets.topic"}) {
		t.Errorf("source groups = %v", got)
	}
	if _, ok := CommonDef(sdk.Source).Key(KeyTopics); ok {
		t.Error("source def has topics")
	}
	if _, ok := CommonDef(sdk.Sink).Key(KeyTransactionBoundary); ok {
		t.Error("sink def has transaction.boundary")
	}
}

func ptr(s string) *string { return &s }

func TestValidateGoodSink(t *testing.T) {
	c := sinkConnector()
	r := Validate(context.Background(), c, goodSink(), workerDefaults)
	if r.ErrorCount != 0 {
		t.Fatalf("errors: %v", r.Errors())
	}
	if r.Name != "TestSink" || !reflect.DeepEqual(r.Groups, []string{"Common", "Transforms", "Predicates", "Error Handling", "Connection", "Writes"}) {
		t.Errorf("name %s groups %v", r.Name, r.Groups)
	}
	pw, _ := r.Config("password")
	if pw.Value.Value == nil || *pw.Value.Value != "[hidden]" || pw.Definition.Type != configdef.Password {
		t.Errorf("password = %+v", pw.Value)
	}
	j, _ := json.Marshal(r)
	if strings.Contains(string(j), "hunter2") {
		t.Error("password leaked into the validation result")
	}
	if strings.Contains(string(j), "some.unknown.key") {
		t.Error("unknown key echoed")
	}
	if c.validated != 1 {
		t.Errorf("connector Validate ran %d times", c.validated)
	}
	tm, _ := r.Config(KeyTasksMax)
	if *tm.Value.Value != "2" || !tm.Value.Visible {
		t.Errorf("tasks.max value = %+v", tm.Value)
	}
}

func TestValidateSinkErrors(t *testing.T) {
	tests := []struct {
		name   string
		change map[string]string
		remove []string
		want   map[string][]string
	}{
		{"missing name", nil, []string{"name"}, map[string][]string{"name": {`Missing required configuration "name" which has no default value.`}}},
		{"control chars in name", map[string]string{"name": "a\nb"}, nil,
			map[string][]string{"name": {"Invalid value a\nb for configuration name: String may not contain control sequences but had the following ASCII chars: 10"}}},
		{"tasks.max 0", map[string]string{"tasks.max": "0"}, nil, map[string][]string{"tasks.max": {"Invalid value 0 for configuration tasks.max: Value must be at least 1"}}},
		{"tasks.max type", map[string]string{"tasks.max": "two"}, nil, map[string][]string{"tasks.max": {"Invalid value two for configuration tasks.max: Not a number of type INT"}}},
		{"tolerance", map[string]string{"errors.tolerance": "some"}, nil, map[string][]string{"errors.tolerance": {"Invalid value some for configuration errors.tolerance: String must be one of: none, all"}}},
		{"topics and regex", map[string]string{"topics.regex": "a.*"}, nil, map[string][]string{
			"topics":       {"topics and topics.regex are mutually exclusive options, but both are set."},
			"topics.regex": {"topics and topics.regex are mutually exclusive options, but both are set."}}},
		{"no topics", nil, []string{"topics"}, map[string][]string{
			"topics": {"Must configure one of topics or topics.regex"}, "topics.regex": {"Must configure one of topics or topics.regex"}}},
		{"dlq in topics", map[string]string{"errors.deadletterqueue.topic.name": "b"}, nil, map[string][]string{
			"topics": {"The DLQ topic 'b' may not be included in the list of topics ('topics=[a, b]') consumed by the connector"}}},
		{"dlq matched by regex", map[string]string{"topics": "", "topics.regex": "a.*", "errors.deadletterqueue.topic.name": "a-dlq"}, nil, map[string][]string{
			"topics.regex": {"The DLQ topic 'a-dlq' may not be matched by the regex for the topics ('topics.regex=a.*') consumed by the connector"}}},
		{"bad regex", map[string]string{"topics": "", "topics.regex": "a("}, nil, map[string][]string{
			"topics.regex": {"Invalid value a( for configuration topics.regex: Invalid regex: error parsing regexp: missing closing ): `a(`"}}},
		{"connector key missing", nil, []string{"hosts"}, map[string][]string{"hosts": {`Missing required configuration "hosts" which has no default value.`}}},
		{"connector Validate", map[string]string{"mode": "upsert"}, nil, map[string][]string{"key.field": {"key.field is required when mode is upsert"}}},
		{"unknown converter", map[string]string{"value.converter": "io.confluent.connect.avro.AvroConverter"}, nil, map[string][]string{
			"value.converter": {"Invalid value io.confluent.connect.avro.AvroConverter for configuration value.converter: Class io.confluent.connect.avro.AvroConverter could not be found; known converters: org.apache.kafka.connect.converters.ByteArrayConverter, org.apache.kafka.connect.storage.StringConverter, org.apache.kafka.connect.json.JsonConverter"}}},
		{"converter setting", map[string]string{"value.converter": "JsonConverter", "value.converter.schemas.enable": "maybe"}, nil, map[string][]string{
			"value.converter.schemas.enable": {"Invalid value maybe for configuration value.converter.schemas.enable: Expected value to be either true or false"}}},
		{"header converter", map[string]string{"header.converter": "JsonConverter", "header.converter.decimal.format": "hex"}, nil, map[string][]string{
			"header.converter.decimal.format": {"Invalid value hex for configuration header.converter.decimal.format: String must be one of (case insensitive): BASE64, NUMERIC"}}},
		{"transform without type", map[string]string{"transforms": "route"}, nil, map[string][]string{
			"transforms.route.type": {`Missing required configuration "transforms.route.type" which has no default value.`}}},
		{"unknown transform", map[string]string{"transforms": "x", "transforms.x.type": "com.example.Nope"}, nil, map[string][]string{
			"transforms.x.type": {"Invalid value com.example.Nope for configuration transforms.x.type: Class com.example.Nope could not be found; known transformations: Cast$Key, Cast$Value, ExtractField$Key, ExtractField$Value, Filter, InsertField$Key, InsertField$Value, MaskField$Key, MaskField$Value, RegexRouter, ReplaceField$Key, ReplaceField$Value, TimestampRouter, ValueToKey"}}},
		{"transform setting", map[string]string{"transforms": "route", "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter", "transforms.route.regex": "(x"}, nil, map[string][]string{
			"transforms.route.regex":       {"Invalid value (x for configuration transforms.route.regex: Invalid regex: error parsing regexp: missing closing ): `(x`"},
			"transforms.route.replacement": {`Missing required configuration "transforms.route.replacement" which has no default value.`}}},
		{"duplicate alias", map[string]string{"transforms": "f,f", "transforms.f.type": "Filter"}, nil, map[string][]string{
			"transforms": {"Invalid value [f, f] for configuration transforms: Duplicate alias provided."}}},
		{"negate without predicate", map[string]string{"transforms": "f", "transforms.f.type": "Filter", "transforms.f.negate": "true"}, nil, map[string][]string{
			"transforms.f.negate": {"Config 'transforms.f.negate' was provided but there is no config 'transforms.f.predicate' defining a predicate to be negated."}}},
		{"undeclared predicate", map[string]string{"transforms": "f", "transforms.f.type": "Filter", "transforms.f.predicate": "p"}, nil, map[string][]string{
			"transforms.f.predicate": {"Invalid value p for configuration transforms.f.predicate: Predicate alias p is not listed in predicates"}}},
		{"predicate setting", map[string]string{"transforms": "f", "transforms.f.type": "Filter", "transforms.f.predicate": "p",
			"predicates": "p", "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"}, nil, map[string][]string{
			"predicates.p.pattern": {`Missing required configuration "predicates.p.pattern" which has no default value.`}}},
		{"unknown predicate", map[string]string{"predicates": "p", "predicates.p.type": "IsRed"}, nil, map[string][]string{
			"predicates.p.type": {"Invalid value IsRed for configuration predicates.p.type: Class IsRed could not be found; known predicates: HasHeaderKey, RecordIsTombstone, TopicNameMatches"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props := goodSink()
			for k, v := range tt.change {
				props[k] = v
			}
			for _, k := range tt.remove {
				delete(props, k)
			}
			r := Validate(context.Background(), sinkConnector(), props, workerDefaults)
			got := errorsOf(r)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors =\n%v\nwant\n%v", got, tt.want)
			}
			n := 0
			for _, e := range got {
				n += len(e)
			}
			if r.ErrorCount != n {
				t.Errorf("error_count = %d, want %d", r.ErrorCount, n)
			}
		})
	}
}

func TestValidateEnrichedKeysAndGroups(t *testing.T) {
	props := goodSink()
	for k, v := range map[string]string{
		"transforms": "mask", "transforms.mask.type": "MaskField$Value", "transforms.mask.fields": "card",
		"transforms.mask.predicate": "big", "transforms.mask.negate": "true",
		"predicates": "big", "predicates.big.type": "TopicNameMatches", "predicates.big.pattern": "big-.*",
		"value.converter": "JsonConverter",
	} {
		props[k] = v
	}
	r := Validate(context.Background(), sinkConnector(), props, workerDefaults)
	if r.ErrorCount != 0 {
		t.Fatalf("errors: %v", r.Errors())
	}
	wantGroups := []string{"Common", "Transforms", "Predicates", "Error Handling", "Transforms: mask", "Predicates: big", "Connection", "Writes", "Schemas", "Serialization"}
	if !reflect.DeepEqual(r.Groups, wantGroups) {
		t.Errorf("groups = %v\nwant %v", r.Groups, wantGroups)
	}
	for _, name := range []string{"transforms.mask.type", "transforms.mask.predicate", "transforms.mask.negate", "transforms.mask.fields",
		"transforms.mask.replacement", "predicates.big.type", "predicates.big.pattern", "value.converter.schemas.enable", "value.converter.converter.type"} {
		c, ok := r.Config(name)
		if !ok || c.Definition == nil {
			t.Errorf("%s missing from the result", name)
			continue
		}
		if c.Definition.Name != name {
			t.Errorf("%s definition named %s", name, c.Definition.Name)
		}
	}
	c, _ := r.Config("transforms.mask.fields")
	if *c.Definition.Group != "Transforms: mask" || c.Definition.Order != 3 || *c.Value.Value != "card" {
		t.Errorf("transforms.mask.fields = %+v %+v", *c.Definition, c.Value)
	}
	c, _ = r.Config("transforms.mask.type")
	if len(c.Value.RecommendedValues) == 0 || c.Value.RecommendedValues[0] != "org.apache.kafka.connect.transforms.InsertField$Key" {
		t.Errorf("type recommendations = %v", c.Value.RecommendedValues)
	}
}

func TestValidateConvertersRequired(t *testing.T) {
	r := Validate(context.Background(), sinkConnector(), goodSink(), nil)
	got := errorsOf(r)
	if len(got["key.converter"]) != 1 || !strings.HasPrefix(got["key.converter"][0], "No key.converter configured: set key.converter in the connector config or the worker config") ||
		len(got["value.converter"]) != 1 {
		t.Errorf("errors = %v", got)
	}
	props := goodSink()
	props["key.converter"], props["value.converter"] = "ByteArrayConverter", "ByteArrayConverter"
	if r := Validate(context.Background(), sinkConnector(), props, nil); r.ErrorCount != 0 {
		t.Errorf("connector converters without worker defaults: %v", r.Errors())
	}
}

// TestValidateRawBytesNeedsNoConverters: a RawBytes source connector is
// valid without any converter setting (it writes its bytes unchanged).
func TestValidateRawBytesNeedsNoConverters(t *testing.T) {
	raw := sourceConnector(true, false)
	raw.spec.RawBytes = true
	props := map[string]string{"name": "r", "connector.class": "TestSource", "tasks.max": "1", "kafka.topic": "t"}
	if r := Validate(context.Background(), raw, props, nil); r.ErrorCount != 0 {
		t.Errorf("raw-bytes source without converters: %v", r.Errors())
	}
	if got := errorsOf(Validate(context.Background(), sourceConnector(true, false), props, nil)); len(got["value.converter"]) != 1 {
		t.Errorf("a source that is not raw bytes needs converters: errors %v", got)
	}
}

func TestValidateConnectorValidateRules(t *testing.T) {
	// The connector's Validate does not run while its own keys have errors.
	c := sinkConnector()
	props := goodSink()
	delete(props, "hosts")
	props["mode"] = "upsert"
	Validate(context.Background(), c, props, workerDefaults)
	if c.validated != 0 {
		t.Error("connector Validate ran despite errors in its own keys")
	}
	// A panicking Validate is an error on connector.class, not a crash.
	c = sinkConnector()
	c.panics = true
	r := Validate(context.Background(), c, goodSink(), workerDefaults)
	got := errorsOf(r)["connector.class"]
	if len(got) != 1 || !strings.Contains(got[0], "panicked: boom") {
		t.Errorf("panic = %v", got)
	}
}

func TestValidateSource(t *testing.T) {
	base := map[string]string{"name": "src", "connector.class": "TestSource", "kafka.topic": "t"}
	with := func(kv ...string) map[string]string {
		p := map[string]string{}
		for k, v := range base {
			p[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	tests := []struct {
		name       string
		conn       *testConnector
		props      map[string]string
		want       map[string][]string
		interval   bool
		visibility bool
	}{
		{"defaults", sourceConnector(false, false), base, map[string][]string{}, false, false},
		{"eos required unsupported", sourceConnector(false, false), with("exactly.once.support", "REQUIRED"),
			map[string][]string{"exactly.once.support": {"The connector does not support exactly-once semantics with the provided configuration."}}, false, false},
		{"eos required supported", sourceConnector(true, false), with("exactly.once.support", "required"), map[string][]string{}, false, false},
		{"connector boundaries unsupported", sourceConnector(true, false), with("transaction.boundary", "connector"),
			map[string][]string{"transaction.boundary": {"The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition."}}, false, false},
		{"connector boundaries supported", sourceConnector(true, true), with("transaction.boundary", "Connector"), map[string][]string{}, false, false},
		{"bad boundary", sourceConnector(true, true), with("transaction.boundary", "sometimes"),
			map[string][]string{"transaction.boundary": {"Invalid value sometimes for configuration transaction.boundary: String must be one of (case insensitive): POLL, INTERVAL, CONNECTOR"}}, false, false},
		{"interval visible", sourceConnector(true, true), with("transaction.boundary", "interval", "transaction.boundary.interval.ms", "-5"),
			map[string][]string{"transaction.boundary.interval.ms": {"Invalid value -5 for configuration transaction.boundary.interval.ms: Value must be at least 0"}}, true, true},
		{"empty offsets topic", sourceConnector(true, true), with("offsets.storage.topic", ""),
			map[string][]string{"offsets.storage.topic": {"Invalid value  for configuration offsets.storage.topic: String must be non-empty"}}, false, false},
		{"missing connector key", sourceConnector(true, true), map[string]string{"name": "src", "connector.class": "TestSource"},
			map[string][]string{"kafka.topic": {`Missing required configuration "kafka.topic" which has no default value.`}}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Validate(context.Background(), tt.conn, tt.props, workerDefaults)
			if got := errorsOf(r); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors = %v\nwant %v", got, tt.want)
			}
			c, _ := r.Config(KeyTransactionBoundaryInterval)
			if c.Value.Visible != tt.visibility {
				t.Errorf("interval visible = %v", c.Value.Visible)
			}
			if _, ok := r.Config(KeyTopics); ok {
				t.Error("source result has topics")
			}
		})
	}
}

func TestParseErrorPolicy(t *testing.T) {
	p, err := ParseErrorPolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ErrorPolicy{Tolerance: "none", RetryTimeout: 0, RetryDelayMax: time.Minute, DLQReplicationFactor: 3}
	if p != want {
		t.Errorf("defaults = %+v", p)
	}
	p, err = ParseErrorPolicy(map[string]string{
		"errors.tolerance": "all", "errors.retry.timeout": "-1", "errors.retry.delay.max.ms": "1500", "errors.log.enable": "true",
		"errors.log.include.messages": "true", "errors.deadletterqueue.topic.name": " dlq ", "errors.deadletterqueue.topic.replication.factor": "1",
		"errors.deadletterqueue.context.headers.enable": "true",
	})
	want = ErrorPolicy{Tolerance: "all", RetryTimeout: Infinite, RetryDelayMax: 1500 * time.Millisecond, LogEnable: true, LogIncludeMessages: true,
		DLQTopic: "dlq", DLQReplicationFactor: 1, DLQContextHeaders: true}
	if err != nil || p != want {
		t.Errorf("parsed = %+v %v", p, err)
	}
	if p, _ := ParseErrorPolicy(map[string]string{"errors.retry.timeout": "30000"}); p.RetryTimeout != 30*time.Second {
		t.Errorf("timeout = %v", p.RetryTimeout)
	}
	_, err = ParseErrorPolicy(map[string]string{"errors.tolerance": "ALL", "errors.retry.timeout": "-2"})
	var errs configdef.Errors
	if !errors.As(err, &errs) || len(errs) != 2 || errs[0].Key != "errors.retry.timeout" || errs[1].Key != "errors.tolerance" {
		t.Errorf("err = %v", err)
	}
}

func TestParse(t *testing.T) {
	c, err := Parse(sdk.Sink, map[string]string{"name": "s", "connector.class": "X", "topics": "a, b,,a", "tasks.max": "3",
		"transforms": "f", "errors.deadletterqueue.topic.name": "dlq"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "s" || c.TasksMax != 3 || !reflect.DeepEqual(c.Topics, []string{"a", "b"}) || c.TopicsRegex != "" ||
		!reflect.DeepEqual(c.Transforms, []string{"f"}) || c.Errors.DLQTopic != "dlq" || !c.TasksMaxEnforce {
		t.Errorf("sink = %+v", c)
	}
	_, err = Parse(sdk.Sink, map[string]string{"name": "s", "connector.class": "X"})
	if err == nil || !strings.Contains(err.Error(), "Must configure one of topics or topics.regex") {
		t.Errorf("no topics: %v", err)
	}
	c, err = Parse(sdk.Source, map[string]string{"name": "s", "connector.class": "X", "transaction.boundary": "INTERVAL",
		"transaction.boundary.interval.ms": "250", "exactly.once.support": "Required", "offsets.storage.topic": "my-offsets",
		"errors.deadletterqueue.topic.name": "ignored-for-sources"})
	if err != nil {
		t.Fatal(err)
	}
	if c.TransactionBoundary != "interval" || c.TransactionBoundaryInterval != 250*time.Millisecond || c.ExactlyOnceSupport != "required" ||
		c.OffsetsTopic != "my-offsets" || c.Errors.DLQTopic != "" || c.Topics != nil {
		t.Errorf("source = %+v", c)
	}
	c, _ = Parse(sdk.Source, map[string]string{"name": "s", "connector.class": "X"})
	if c.TransactionBoundary != "poll" || c.TransactionBoundaryInterval != 0 || c.OffsetsTopic != "" {
		t.Errorf("source defaults = %+v", c)
	}
}
