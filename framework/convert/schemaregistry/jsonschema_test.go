package schemaregistry_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	srclient "github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/jsonschema"

	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/internal/registrytest"
)

func newJSONSchema(t testing.TB, url string) convert.Converter {
	t.Helper()
	c, err := convert.NewSet(schemaregistry.Infos()...).New(schemaregistry.JSONSchemaClass, map[string]string{"schema.registry.url": url}, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.(interface{ Close() error }).Close() })
	return c
}

type jsItem struct {
	ID    string         `json:"id"`
	Qty   int64          `json:"qty"`
	Tags  []string       `json:"tags"`
	Attrs map[string]int `json:"attrs"`
	Ship  struct {
		City string `json:"city"`
	} `json:"ship"`
}

// TestJSONSchemaFromConfluentSerializer: a document written by
// confluent-kafka-go's jsonschema serializer (schema derived from the Go
// type and registered by it), through Kafka, read by the converter.
func TestJSONSchemaFromConfluentSerializer(t *testing.T) {
	url := registrytest.URL(t)
	topic, _ := topicAndSubject(t)
	ser, err := jsonschema.NewSerializer(registrytest.Client(t), serde.ValueSerde, jsonschema.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	in := jsItem{ID: "i-1", Qty: 1 << 60, Tags: []string{"a"}, Attrs: map[string]int{"w": 3}}
	in.Ship.City = "Paris"
	b, err := ser.Serialize(topic, &in)
	if err != nil {
		t.Fatal(err)
	}
	b = throughKafka(t, topic, b)
	s, v, err := newJSONSchema(t, url).ToConnect(topic, b)
	if err != nil {
		t.Fatalf("ToConnect: %v", err)
	}
	st := v.(*data.StructValue)
	for name, want := range map[string]any{"id": "i-1", "qty": int64(1 << 60), "tags": []any{"a"}, "attrs": map[string]any{"w": int64(3)}} {
		if got, _ := st.Get(name); !data.ValueEqual(got, want) {
			t.Errorf("%s = %#v, want %#v (schema %v)", name, got, want, s)
		}
	}
	ship, _ := st.Get("ship")
	if city, _ := ship.(*data.StructValue).Get("city"); city != "Paris" {
		t.Errorf("ship.city = %v", city)
	}
}

// TestJSONSchemaToConfluentDeserializer: a Connect struct with logical
// types written by the converter, read by confluent-kafka-go's jsonschema
// deserializer, and by the converter itself.
func TestJSONSchemaToConfluentDeserializer(t *testing.T) {
	url := registrytest.URL(t)
	topic, subject := topicAndSubject(t)
	schema := data.Build(data.Struct).Name("shop.Order").
		Field("id", data.PrimitiveSchema(data.String)).
		Field("total", data.DecimalSchema(2).MustSchema()).
		Field("day", data.DateSchema().MustSchema()).
		Field("at", data.TimeSchema().MustSchema()).
		Field("ts", data.TimestampSchema().MustSchema()).
		Field("note", data.OptionalSchema(data.String)).
		Field("raw", data.PrimitiveSchema(data.Bytes)).
		Field("prio", data.Build(data.Int32).Default(int32(5)).MustSchema()).
		MustSchema()
	day, at, ts := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), time.UnixMilli(47107250).UTC(), time.UnixMilli(1764720000123).UTC()
	v := data.NewStruct(schema).MustPut("id", "o-1").MustPut("total", data.NewDecimal(123456, 2)).MustPut("day", day).
		MustPut("at", at).MustPut("ts", ts).MustPut("raw", []byte{0, 1, 2}).MustPut("prio", int32(9))
	c := newJSONSchema(t, url)
	b, err := c.FromConnect(topic, schema, v)
	if err != nil {
		t.Fatalf("FromConnect: %v", err)
	}
	b = throughKafka(t, topic, b)
	if meta, err := registrytest.Client(t).GetLatestSchemaMetadata(subject); err != nil || meta.SchemaType != "JSON" {
		t.Fatalf("registered %+v %v, want a JSON schema", meta, err)
	}
	de, err := jsonschema.NewDeserializer(registrytest.Client(t), serde.ValueSerde, jsonschema.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		ID    string      `json:"id"`
		Total json.Number `json:"total"`
		Day   int32       `json:"day"`
		At    int32       `json:"at"`
		TS    int64       `json:"ts"`
		Note  *string     `json:"note"`
		Raw   []byte      `json:"raw"`
		Prio  int32       `json:"prio"`
	}
	if err := de.DeserializeInto(topic, b, &out); err != nil {
		t.Fatalf("confluent deserialize: %v", err)
	}
	if out.ID != "o-1" || out.Total != "1234.56" || out.Day != 20790 || out.At != 47107250 || out.TS != 1764720000123 ||
		out.Note != nil || string(out.Raw) != "\x00\x01\x02" || out.Prio != 9 {
		t.Errorf("confluent read %+v", out)
	}
	s2, v2, err := c.ToConnect(topic, b)
	if err != nil {
		t.Fatalf("ToConnect: %v", err)
	}
	if !data.ValueEqual(v2, v) && v2.(*data.StructValue).String() != v.String() {
		t.Errorf("read back %v, want %v", v2, v)
	}
	for _, name := range []string{"total", "day", "at", "ts"} {
		f, _ := s2.Field(name)
		wf, _ := schema.Field(name)
		if f.Schema.Name != wf.Schema.Name {
			t.Errorf("%s schema %s, want %s", name, f.Schema, wf.Schema)
		}
	}
	if f, _ := s2.Field("prio"); !data.ValueEqual(f.Schema.Default, int32(5)) {
		t.Errorf("prio default %#v", f.Schema.Default)
	}
	if _, _, err := c.ToConnect(topic, []byte(`{"id":"x"}`)); !errors.As(err, new(*data.Error)) {
		t.Errorf("no magic byte: %v", err)
	}
}

// TestJSONSchemaEvolution: under BACKWARD, adding an optional field
// registers a new version; removing one (closed content model) and
// changing a field's type are refused with the registry's message.
func TestJSONSchemaEvolution(t *testing.T) {
	url := registrytest.URL(t)
	topic, subject := topicAndSubject(t)
	if _, err := registrytest.Client(t).UpdateCompatibility(subject, srclient.Backward); err != nil {
		t.Fatal(err)
	}
	c := newJSONSchema(t, url)
	item := func(fields ...string) *data.Schema {
		b := data.Build(data.Struct).Name("shop.Item").Field("id", data.PrimitiveSchema(data.String))
		for _, f := range fields {
			b.Field(f, data.OptionalSchema(data.String))
		}
		return b.MustSchema()
	}
	for i, s := range []*data.Schema{item("old"), item("old", "color")} {
		if _, err := c.FromConnect(topic, s, data.NewStruct(s).MustPut("id", "x")); err != nil {
			t.Fatalf("version %d (%v): %v", i+1, s.Fields, err)
		}
	}
	if versions, err := registrytest.Client(t).GetAllVersions(subject); err != nil || len(versions) != 2 {
		t.Fatalf("versions %v %v, want 2", versions, err)
	}
	// With the closed content model, a reader without "old" would reject
	// old documents carrying it: the registry refuses the removal.
	rm := item("color")
	if _, err := c.FromConnect(topic, rm, data.NewStruct(rm).MustPut("id", "x")); !errors.As(err, new(*data.Error)) {
		t.Fatalf("removing a field: got %v, want the registry's refusal", err)
	}
	bad := data.Build(data.Struct).Name("shop.Item").Field("id", data.PrimitiveSchema(data.Int64)).MustSchema()
	_, err := c.FromConnect(topic, bad, data.NewStruct(bad).MustPut("id", int64(1)))
	if !errors.As(err, new(*data.Error)) || !strings.Contains(strings.ToLower(err.Error()), "incompatible") {
		t.Fatalf("changing id to an integer: got %v, want the registry's refusal", err)
	}
	t.Logf("registry refused: %v", err)
}
