package chain

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
)

var byteArrayDefaults = ByteArrayDefaults()

func TestSourceByteArrayPassThrough(t *testing.T) {
	s, err := NewSource(map[string]string{"name": "c"}, byteArrayDefaults)
	if err != nil {
		t.Fatal(err)
	}
	key, val := []byte("k"), []byte("value bytes")
	hdrs := []sdk.Header{{Key: "h", Value: []byte("1")}}
	ts := time.UnixMilli(1700000000000)
	rec := &sdk.SourceRecord{Topic: "out", Partition: sdk.AnyPartition, Key: key, Value: val, Headers: hdrs, Timestamp: ts,
		SourcePartition: map[string]any{"f": "x"}, SourceOffset: map[string]any{"pos": int64(1)}}
	out, keep, fail := s.Apply(rec)
	if fail != nil || !keep {
		t.Fatalf("keep=%v fail=%v", keep, fail)
	}
	if out.Topic != "out" || out.Partition != sdk.AnyPartition || &out.Key[0] != &key[0] || &out.Value[0] != &val[0] ||
		len(out.Headers) != 1 || !out.Timestamp.Equal(ts) {
		t.Errorf("out = %+v", out)
	}
	if n := testing.AllocsPerRun(1000, func() { s.Apply(rec) }); n != 0 {
		t.Errorf("ByteArray source path allocates %v times per record", n)
	}
	// Tombstone.
	out, keep, fail = s.Apply(&sdk.SourceRecord{Topic: "out", Key: key})
	if fail != nil || !keep || out.Value != nil {
		t.Errorf("tombstone = %+v %v", out, fail)
	}
}

func TestSourceJSONWithTransforms(t *testing.T) {
	props := map[string]string{
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                "JsonConverter",
		"value.converter.schemas.enable": "true",
		"transforms":                     "route,insert,drop",
		"transforms.route.type":          "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex":         "(.*)-raw",
		"transforms.route.replacement":   "$1-clean",
		"transforms.insert.type":         "InsertField$Value",
		"transforms.insert.topic.field":  "src",
		"transforms.drop.type":           "Filter",
		"transforms.drop.predicate":      "tomb",
		"predicates":                     "tomb",
		"predicates.tomb.type":           "RecordIsTombstone",
	}
	s, err := NewSource(props, byteArrayDefaults)
	if err != nil {
		t.Fatal(err)
	}
	schema := data.Build(data.Struct).Name("order").Field("id", data.PrimitiveSchema(data.Int64)).MustSchema()
	v := data.NewStruct(schema).MustPut("id", int64(7))
	rec := &sdk.SourceRecord{Topic: "orders-raw", Key: "k1", ValueSchema: schema, Value: v}
	out, keep, fail := s.Apply(rec)
	if fail != nil || !keep {
		t.Fatalf("keep=%v fail=%v", keep, fail)
	}
	want := `{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":true,"field":"src"}],"optional":false,"name":"order"},"payload":{"id":7,"src":"orders-clean"}}`
	if out.Topic != "orders-clean" || string(out.Key) != "k1" || string(out.Value) != want {
		t.Errorf("out topic=%s key=%s value=%s", out.Topic, out.Key, out.Value)
	}
	if rec.Topic != "orders-raw" || rec.Value != v {
		t.Error("Apply modified the source record")
	}
	// The predicate-guarded Filter drops tombstones only.
	_, keep, fail = s.Apply(&sdk.SourceRecord{Topic: "orders-raw", Key: "k1"})
	if keep || fail != nil {
		t.Errorf("tombstone: keep=%v fail=%v", keep, fail)
	}
}

func TestSourceFailures(t *testing.T) {
	s, err := NewSource(map[string]string{
		"transforms": "x", "transforms.x.type": "ExtractField$Value", "transforms.x.field": "f",
	}, byteArrayDefaults)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rec   *sdk.SourceRecord
		stage sdk.Stage
		class string
		msg   string
	}{
		{&sdk.SourceRecord{Topic: "t", Value: "not a map"}, sdk.StageTransformation, "org.apache.kafka.connect.transforms.ExtractField$Value",
			"Only Map objects supported in absence of schema for [field extraction], found: string"},
		{&sdk.SourceRecord{Topic: "t", Key: "string key", Value: map[string]any{"f": []byte("v")}}, sdk.StageKeyConverter, convert.ByteArrayClass,
			"ByteArrayConverter is not compatible with objects of type string"},
		{&sdk.SourceRecord{Topic: "t", Value: map[string]any{"f": int32(1)}}, sdk.StageValueConverter, convert.ByteArrayClass,
			"ByteArrayConverter is not compatible with objects of type int32"},
	}
	for _, tt := range tests {
		_, keep, fail := s.Apply(tt.rec)
		if keep || fail == nil {
			t.Fatalf("%+v: keep=%v fail=nil", tt.rec, keep)
		}
		if fail.Stage != tt.stage || fail.Class != tt.class || fail.Err.Error() != tt.msg {
			t.Errorf("failure = %s / %s / %v", fail.Stage, fail.Class, fail.Err)
		}
		if !strings.Contains(fail.Error(), string(tt.stage)) || !errors.Is(fail, fail.Err) {
			t.Errorf("Error() = %s", fail.Error())
		}
	}
}

func TestSink(t *testing.T) {
	props := map[string]string{
		"value.converter":                "JsonConverter",
		"value.converter.schemas.enable": "false",
		"transforms":                     "route,mask",
		"transforms.route.type":          "TimestampRouter",
		"transforms.mask.type":           "MaskField$Value",
		"transforms.mask.fields":         "card",
	}
	s, err := NewSink(props, Defaults{KeyConverter: "StringConverter", ValueConverter: "ByteArrayConverter"})
	if err != nil {
		t.Fatal(err)
	}
	in := Raw{Topic: "pay", Partition: 3, Offset: 42, Key: []byte("u1"), Value: []byte(`{"card":"4111","amount":12}`),
		Headers: []sdk.Header{{Key: "h"}}, Timestamp: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)}
	rec, keep, fail := s.Apply(in)
	if fail != nil || !keep {
		t.Fatalf("keep=%v fail=%v", keep, fail)
	}
	if rec.Topic != "pay-20240506" || rec.OriginalTopic != "pay" || rec.OriginalPartition != 3 || rec.OriginalOffset != 42 ||
		rec.Partition != 3 || rec.Offset != 42 || rec.Key != "u1" || rec.KeySchema.Type != data.String || len(rec.Headers) != 1 {
		t.Errorf("rec = %+v", rec)
	}
	if !data.ValueEqual(rec.Value, map[string]any{"card": "", "amount": int64(12)}) || rec.ValueSchema != nil {
		t.Errorf("value = %#v", rec.Value)
	}
	if rec.OriginalTopicPartition() != (sdk.TopicPartition{Topic: "pay", Partition: 3}) {
		t.Error("OriginalTopicPartition")
	}

	_, keep, fail = s.Apply(Raw{Topic: "pay", Value: []byte(`{"card":`), Timestamp: in.Timestamp})
	if keep || fail == nil || fail.Stage != sdk.StageValueConverter || fail.Class != convert.JSONClass ||
		!strings.HasPrefix(fail.Err.Error(), "Converting byte[] to Kafka Connect data failed due to serialization error") {
		t.Errorf("bad JSON failure = %+v", fail)
	}
	_, keep, fail = s.Apply(Raw{Topic: "pay", Value: []byte(`{}`)}) // no timestamp
	if keep || fail == nil || fail.Stage != sdk.StageTransformation || fail.Class != "org.apache.kafka.connect.transforms.TimestampRouter" {
		t.Errorf("transform failure = %+v", fail)
	}

	// ApplyTo reuses the caller's record.
	var buf sdk.SinkRecord
	if keep, fail := s.ApplyTo(in, &buf); !keep || fail != nil || buf.Topic != "pay-20240506" {
		t.Errorf("ApplyTo = %v %v %+v", keep, fail, buf)
	}
}

func TestSinkByteArrayAllocs(t *testing.T) {
	s, err := NewSink(nil, byteArrayDefaults)
	if err != nil {
		t.Fatal(err)
	}
	in := Raw{Topic: "t", Key: []byte("k"), Value: make([]byte, 1024)}
	var rec sdk.SinkRecord
	n := testing.AllocsPerRun(1000, func() { s.ApplyTo(in, &rec) })
	// Boxing the key and value slices into the record's interface fields.
	if n > 2 {
		t.Errorf("ByteArray sink path allocates %v times per record, want <= 2", n)
	}
	if &rec.Value.([]byte)[0] != &in.Value[0] {
		t.Error("value copied")
	}
}

func TestConverterResolution(t *testing.T) {
	worker := Defaults{
		KeyConverter: "StringConverter", ValueConverter: "JsonConverter", "value.converter.schemas.enable": "false",
	}
	// The worker's converter with the worker's settings.
	s, err := NewSource(map[string]string{"value.converter.schemas.enable": "true"}, worker)
	if err != nil {
		t.Fatal(err)
	}
	out, _, fail := s.Apply(&sdk.SourceRecord{Topic: "t", Value: map[string]any{"a": int64(1)}})
	if fail != nil || string(out.Value) != `{"a":1}` {
		t.Errorf("worker settings not used (connector sub-keys must be ignored): %s %v", out.Value, fail)
	}
	// The connector's converter with the connector's settings.
	s, err = NewSource(map[string]string{"value.converter": "JsonConverter"}, worker)
	if err != nil {
		t.Fatal(err)
	}
	out, _, _ = s.Apply(&sdk.SourceRecord{Topic: "t", Value: map[string]any{"a": int64(1)}})
	if string(out.Value) != `{"schema":null,"payload":{"a":1}}` {
		t.Errorf("connector converter = %s", out.Value)
	}

	errTests := []struct {
		props    map[string]string
		defaults Defaults
		key      string
		msg      string
	}{
		{nil, nil, "key.converter", "no key.converter configured: set key.converter in the connector config or the worker config to one of "},
		{map[string]string{"key.converter": "StringConverter"}, nil, "value.converter", "no value.converter configured"},
		{map[string]string{"value.converter": "io.confluent.connect.avro.AvroConverter"}, worker, "value.converter",
			"Invalid value io.confluent.connect.avro.AvroConverter for configuration value.converter: Class io.confluent.connect.avro.AvroConverter could not be found; known converters: "},
		{map[string]string{"value.converter": "JsonConverter", "value.converter.schemas.enable": "maybe"}, worker, "value.converter.schemas.enable",
			"Invalid value maybe for configuration value.converter.schemas.enable: Expected value to be either true or false"},
		{map[string]string{"header.converter": "Nope"}, worker, "header.converter", "Invalid value Nope for configuration header.converter"},
		{map[string]string{"key.converter": "SimpleHeaderConverter"}, worker, "key.converter", "Invalid value SimpleHeaderConverter for configuration key.converter"},
		{map[string]string{"transforms": "a"}, worker, "transforms.a.type", `Missing required configuration "transforms.a.type"`},
	}
	for _, tt := range errTests {
		_, err := NewSink(tt.props, tt.defaults)
		if err == nil || !strings.HasPrefix(err.Error(), tt.msg) {
			t.Errorf("%v:\n got %v\nwant %s...", tt.props, err, tt.msg)
			continue
		}
		var ce *configdef.ConfigError
		var errs configdef.Errors
		key := ""
		if errors.As(err, &errs) {
			key = errs[0].Key
		} else if errors.As(err, &ce) {
			key = ce.Key
		}
		if key != tt.key {
			t.Errorf("%v: error key %q, want %q", tt.props, key, tt.key)
		}
	}
	if c, ok := ResolveConverter(HeaderConverter, nil, nil); !ok || c.Class != convert.SimpleHeaderClass {
		t.Errorf("default header converter = %+v", c)
	}
	if _, err := NewSource(map[string]string{"header.converter": "JsonConverter"}, worker); err != nil {
		t.Errorf("JsonConverter as header converter: %v", err)
	}
}

// TestRawBytesDefaults checks sdk.Spec.RawBytes: the worker's JsonConverter
// defaults do not apply to a raw-bytes source connector (its bytes reach
// Kafka unchanged), its own converter settings still do, and a connector
// that does not declare it keeps the worker's defaults.
func TestRawBytesDefaults(t *testing.T) {
	worker := Defaults{
		KeyConverter: convert.JSONClass, ValueConverter: convert.JSONClass, "value.converter.schemas.enable": "false", "key.converter.schemas.enable": "false",
		HeaderConverter: convert.SimpleHeaderClass,
	}
	raw := sdk.Spec{Type: sdk.Source, RawBytes: true}
	bytesSchema := &data.Schema{Type: data.Bytes, Optional: true}
	rec := &sdk.SourceRecord{Topic: "t", KeySchema: bytesSchema, Key: []byte{0x00, 0xff}, ValueSchema: bytesSchema, Value: []byte(`{"x":1}`)}
	tests := []struct {
		name      string
		spec      sdk.Spec
		props     map[string]string
		key, want string
	}{
		{"raw bytes ignores the worker's JsonConverter", raw, nil, "\x00\xff", `{"x":1}`},
		{"raw bytes honours the connector's own converter", raw, map[string]string{ValueConverter: convert.JSONClass, "value.converter.schemas.enable": "false"}, "\x00\xff", `"eyJ4IjoxfQ=="`},
		{"other connectors keep the worker's defaults", sdk.Spec{Type: sdk.Source}, nil, `"AP8="`, `"eyJ4IjoxfQ=="`},
		{"a sink spec is not affected", sdk.Spec{Type: sdk.Sink, RawBytes: true}, nil, `"AP8="`, `"eyJ4IjoxfQ=="`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := worker.For(tt.spec)
			if d[HeaderConverter] != convert.SimpleHeaderClass {
				t.Errorf("header.converter default lost: %v", d)
			}
			s, err := NewSource(tt.props, d)
			if err != nil {
				t.Fatal(err)
			}
			out, keep, fail := s.Apply(rec)
			if fail != nil || !keep {
				t.Fatalf("keep=%v fail=%v", keep, fail)
			}
			if string(out.Key) != tt.key || string(out.Value) != tt.want {
				t.Errorf("key %q value %q, want %q %q", out.Key, out.Value, tt.key, tt.want)
			}
		})
	}
	if worker[KeyConverter] != convert.JSONClass {
		t.Errorf("For modified the worker's defaults: %v", worker)
	}
}
