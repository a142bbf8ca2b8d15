package schemaregistry_test

import (
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	srclient "github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"
	"github.com/hamba/avro/v2"

	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/internal/registrytest"
)

// orderSchema is the Avro schema the "producer application" of these tests
// writes with confluent-kafka-go's own serializer.
const orderSchema = `{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"id","type":"string"},
 {"name":"qty","type":"int"},
 {"name":"total","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"at","type":{"type":"int","logicalType":"time-millis"}},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"stock","type":{"type":"map","values":"long"}},
 {"name":"ship","type":{"type":"record","name":"Address","fields":[{"name":"city","type":"string"},{"name":"zip","type":["null","int"],"default":null}]}},
 {"name":"prio","type":"int","default":5}
]}`

type address struct {
	City string `avro:"city"`
	Zip  *int32 `avro:"zip"`
}

type order struct {
	ID    string           `avro:"id"`
	Qty   int32            `avro:"qty"`
	Total *big.Rat         `avro:"total"`
	Day   time.Time        `avro:"day"`
	At    time.Duration    `avro:"at"`
	TS    time.Time        `avro:"ts"`
	Note  *string          `avro:"note"`
	Tags  []string         `avro:"tags"`
	Stock map[string]int64 `avro:"stock"`
	Ship  address          `avro:"ship"`
	Prio  int32            `avro:"prio"`
}

// Schema makes confluent-kafka-go's serializer register orderSchema rather
// than one it derives from the Go type.
func (*order) Schema() avro.Schema { return avro.MustParse(orderSchema) }

func sampleOrder() order {
	note, zip := "fragile", int32(75001)
	return order{
		ID: "o-1", Qty: 3, Total: big.NewRat(123456, 100),
		Day: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), At: 13*time.Hour + 5*time.Minute + 7*time.Second + 250*time.Millisecond,
		TS: time.UnixMilli(1764720000123).UTC(), Note: &note, Tags: []string{"a", "b"},
		Stock: map[string]int64{"paris": 7}, Ship: address{City: "Paris", Zip: &zip}, Prio: 9,
	}
}

func topicAndSubject(t *testing.T) (string, string) {
	t.Helper()
	subject := registrytest.Subject(t, "value")
	topic := strings.TrimSuffix(subject, "-value")
	kafkatest.CreateTopic(t, topic)
	return topic, subject
}

func newAvro(t testing.TB, props map[string]string, isKey bool) convert.Converter {
	t.Helper()
	return newConverterRole(t, schemaregistry.AvroClass, props, isKey)
}

func newConverter(t testing.TB, class string, props map[string]string) convert.Converter {
	t.Helper()
	return newConverterRole(t, class, props, false)
}

func newConverterRole(t testing.TB, class string, props map[string]string, isKey bool) convert.Converter {
	t.Helper()
	set := convert.NewSet(schemaregistry.Infos()...)
	c, err := set.New(class, props, isKey)
	if err != nil {
		t.Fatalf("configure AvroConverter: %v", err)
	}
	if cl, ok := c.(interface{ Close() error }); ok {
		t.Cleanup(func() { _ = cl.Close() })
	}
	return c
}

// throughKafka produces value to topic and returns what a consumer reads.
func throughKafka(t *testing.T, topic string, value []byte) []byte {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t), "acks": "all"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	done := make(chan kafka.Event, 1)
	if err := p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny}, Value: value}, done); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-done:
		if err := ev.(*kafka.Message).TopicPartition.Error; err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery report in 30s")
	}
	msgs := kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 200*time.Millisecond, 30*time.Second)
	if len(msgs) == 0 {
		t.Fatal("nothing read back")
	}
	return msgs[len(msgs)-1].Value
}

// TestAvroFromConfluentSerializer: bytes written by confluent-kafka-go's
// avrov2 serializer, read back through Kafka by the converter, field for
// field, logical types included.
func TestAvroFromConfluentSerializer(t *testing.T) {
	url := registrytest.URL(t)
	topic, _ := topicAndSubject(t)
	ser, err := avrov2.NewSerializer(registrytest.Client(t), serde.ValueSerde, avrov2.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	in := sampleOrder()
	payload, err := ser.Serialize(topic, &in)
	if err != nil {
		t.Fatalf("confluent serialize: %v", err)
	}
	payload = throughKafka(t, topic, payload)

	c := newAvro(t, map[string]string{"schema.registry.url": url}, false)
	schema, v, err := c.ToConnect(topic, payload)
	if err != nil {
		t.Fatalf("ToConnect: %v", err)
	}
	st := v.(*data.StructValue)
	if schema.Name != "shop.Order" || schema.Type != data.Struct {
		t.Fatalf("schema %s, want struct shop.Order", schema)
	}
	want := map[string]any{
		"id": "o-1", "qty": int32(3), "total": data.NewDecimal(123456, 2),
		"day": in.Day, "at": time.UnixMilli(in.At.Milliseconds()).UTC(), "ts": in.TS, "note": "fragile",
		"tags": []any{"a", "b"}, "stock": map[string]any{"paris": int64(7)}, "prio": int32(9),
	}
	for name, w := range want {
		got, err := st.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if !data.ValueEqual(got, w) {
			t.Errorf("field %s = %#v, want %#v", name, got, w)
		}
	}
	for name, logical := range map[string]string{"total": data.DecimalName, "day": data.DateName, "at": data.TimeName, "ts": data.TimestampName} {
		f, _ := schema.Field(name)
		if f.Schema.Name != logical {
			t.Errorf("field %s has schema %s, want logical %s", name, f.Schema, logical)
		}
	}
	if f, _ := schema.Field("note"); !f.Schema.Optional {
		t.Error("note is not optional")
	}
	ship, _ := st.Get("ship")
	city, _ := ship.(*data.StructValue).Get("city")
	zip, _ := ship.(*data.StructValue).Get("zip")
	if city != "Paris" || zip != int32(75001) {
		t.Errorf("ship = %v, want Paris 75001", ship)
	}
	if err := data.Validate(v, schema); err != nil {
		t.Errorf("value does not validate against its schema: %v", err)
	}

	// And back: the converter re-encodes the Connect value, confluent's
	// deserializer reads it into the same Go value.
	out := roundTripToConfluent(t, c, topic, schema, v)
	checkOrder(t, out, in)
}

// TestAvroToConfluentDeserializer: a Connect struct written by the
// converter (auto-registering its derived schema) is read by
// confluent-kafka-go's avrov2 deserializer.
func TestAvroToConfluentDeserializer(t *testing.T) {
	url := registrytest.URL(t)
	topic, subject := topicAndSubject(t)
	addr := data.Build(data.Struct).Name("shop.Address").
		Field("city", data.PrimitiveSchema(data.String)).
		Field("zip", data.OptionalSchema(data.Int32)).MustSchema()
	schema := data.Build(data.Struct).Name("shop.Order").
		Field("id", data.PrimitiveSchema(data.String)).
		Field("qty", data.PrimitiveSchema(data.Int32)).
		Field("total", data.DecimalSchema(2).Parameter("connect.decimal.precision", "10").MustSchema()).
		Field("day", data.DateSchema().MustSchema()).
		Field("at", data.TimeSchema().MustSchema()).
		Field("ts", data.TimestampSchema().MustSchema()).
		Field("note", data.OptionalSchema(data.String)).
		Field("tags", data.ArrayOf(data.PrimitiveSchema(data.String)).MustSchema()).
		Field("stock", data.MapOf(data.PrimitiveSchema(data.String), data.PrimitiveSchema(data.Int64)).MustSchema()).
		Field("ship", addr).
		Field("prio", data.Build(data.Int32).Default(int32(5)).MustSchema()).
		MustSchema()
	in := sampleOrder()
	v := data.NewStruct(schema).MustPut("id", "o-1").MustPut("qty", int32(3)).MustPut("total", data.NewDecimal(123456, 2)).
		MustPut("day", in.Day).MustPut("at", time.UnixMilli(in.At.Milliseconds()).UTC()).MustPut("ts", in.TS).
		MustPut("note", "fragile").MustPut("tags", []any{"a", "b"}).MustPut("stock", map[string]any{"paris": int64(7)}).
		MustPut("ship", data.NewStruct(addr).MustPut("city", "Paris").MustPut("zip", int32(75001))).MustPut("prio", int32(9))

	c := newAvro(t, map[string]string{"schema.registry.url": url}, false)
	out := roundTripToConfluent(t, c, topic, schema, v)
	checkOrder(t, out, in)
	meta, err := registrytest.Client(t).GetLatestSchemaMetadata(subject)
	if err != nil {
		t.Fatalf("the converter registered nothing under %s: %v", subject, err)
	}
	if !strings.Contains(meta.Schema, `"logicalType":"timestamp-millis"`) {
		t.Errorf("registered schema lacks the Timestamp logical type: %s", meta.Schema)
	}
	// The converter registers defaults (confluent-kafka-go's own
	// serializer registers the canonical form, which drops them), and
	// reads them back into the Connect schema.
	b, err := c.FromConnect(topic, schema, v)
	if err != nil {
		t.Fatal(err)
	}
	back, bv, err := c.ToConnect(topic, b)
	if err != nil {
		t.Fatalf("ToConnect of its own bytes: %v", err)
	}
	if f, _ := back.Field("prio"); !data.ValueEqual(f.Schema.Default, int32(5)) {
		t.Errorf("prio default %#v, want 5", f.Schema.Default)
	}
	if f, _ := back.Field("note"); !f.Schema.Optional || f.Schema.Default != nil {
		t.Errorf("note: optional %v default %v, want optional without default", f.Schema.Optional, f.Schema.Default)
	}
	if !data.ValueEqual(bv.(*data.StructValue).At(1), int32(3)) {
		t.Errorf("qty read back as %#v", bv.(*data.StructValue).At(1))
	}
}

func roundTripToConfluent(t *testing.T, c convert.Converter, topic string, schema *data.Schema, v any) order {
	t.Helper()
	b, err := c.FromConnect(topic, schema, v)
	if err != nil {
		t.Fatalf("FromConnect: %v", err)
	}
	b = throughKafka(t, topic, b)
	de, err := avrov2.NewDeserializer(registrytest.Client(t), serde.ValueSerde, avrov2.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	var out order
	if err := de.DeserializeInto(topic, b, &out); err != nil {
		t.Fatalf("confluent deserialize: %v", err)
	}
	return out
}

func checkOrder(t *testing.T, got, want order) {
	t.Helper()
	if got.ID != want.ID || got.Qty != want.Qty || got.Total.Cmp(want.Total) != 0 || !got.Day.Equal(want.Day) ||
		got.At != want.At || !got.TS.Equal(want.TS) || *got.Note != *want.Note || strings.Join(got.Tags, ",") != "a,b" ||
		got.Stock["paris"] != 7 || got.Ship.City != "Paris" || *got.Ship.Zip != 75001 || got.Prio != want.Prio {
		t.Fatalf("confluent read %+v, want %+v", got, want)
	}
}

// TestAvroEvolution: under BACKWARD, adding an optional field and removing
// one register new versions; an incompatible change (a required field
// without default) is refused with the registry's message, as a data error
// (dead-letter queue or FAILED, per errors.tolerance).
func TestAvroEvolution(t *testing.T) {
	url := registrytest.URL(t)
	topic, subject := topicAndSubject(t)
	if _, err := registrytest.Client(t).UpdateCompatibility(subject, srclient.Backward); err != nil {
		t.Fatalf("set BACKWARD: %v", err)
	}
	c := newAvro(t, map[string]string{"schema.registry.url": url}, false)
	write := func(s *data.Schema, v *data.StructValue) error {
		_, err := c.FromConnect(topic, s, v)
		return err
	}
	v1 := data.Build(data.Struct).Name("shop.Item").Field("id", data.PrimitiveSchema(data.String)).
		Field("old", data.OptionalSchema(data.String)).MustSchema()
	if err := write(v1, data.NewStruct(v1).MustPut("id", "a").MustPut("old", "x")); err != nil {
		t.Fatalf("v1: %v", err)
	}
	v2 := data.Build(data.Struct).Name("shop.Item").Field("id", data.PrimitiveSchema(data.String)).
		Field("old", data.OptionalSchema(data.String)).Field("color", data.OptionalSchema(data.String)).MustSchema()
	if err := write(v2, data.NewStruct(v2).MustPut("id", "b").MustPut("color", "red")); err != nil {
		t.Fatalf("adding an optional field: %v", err)
	}
	v3 := data.Build(data.Struct).Name("shop.Item").Field("id", data.PrimitiveSchema(data.String)).
		Field("color", data.OptionalSchema(data.String)).MustSchema()
	b3, err := c.FromConnect(topic, v3, data.NewStruct(v3).MustPut("id", "c"))
	if err != nil {
		t.Fatalf("removing a field: %v", err)
	}
	versions, err := registrytest.Client(t).GetAllVersions(subject)
	if err != nil || len(versions) != 3 {
		t.Fatalf("versions of %s: %v %v, want 3", subject, versions, err)
	}
	s, v, err := c.ToConnect(topic, b3)
	if err != nil || len(s.Fields) != 2 {
		t.Fatalf("reading v3 back: %v %v", s, err)
	}
	if id, _ := v.(*data.StructValue).Get("id"); id != "c" {
		t.Fatalf("id = %v", id)
	}
	bad := data.Build(data.Struct).Name("shop.Item").Field("id", data.PrimitiveSchema(data.String)).
		Field("weight", data.PrimitiveSchema(data.Int64)).MustSchema()
	err = write(bad, data.NewStruct(bad).MustPut("id", "d").MustPut("weight", int64(1)))
	var de *data.Error
	if !errors.As(err, &de) || !strings.Contains(strings.ToLower(err.Error()), "incompatible") || sdk.IsRetriable(err) {
		t.Fatalf("incompatible change: got %v, want a data error with the registry's incompatibility message", err)
	}
	t.Logf("registry refused: %v", err)
}

// TestAvroBadInput: each kind of bad payload is a data error with a reason
// (the framework sends it to the dead-letter queue, or fails the task under
// errors.tolerance=none).
func TestAvroBadInput(t *testing.T) {
	url := registrytest.URL(t)
	c := newAvro(t, map[string]string{"schema.registry.url": url}, false)
	s := data.Build(data.Struct).Name("shop.Bad").Field("id", data.PrimitiveSchema(data.String)).MustSchema()
	topic, _ := topicAndSubject(t)
	good, err := c.FromConnect(topic, s, data.NewStruct(s).MustPut("id", "some id"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, payload, reason string
	}{
		{"no magic byte", `{"id":"json"}`, "magic byte"},
		{"empty", "", "magic byte"},
		{"truncated header", "\x00\x00\x01", "truncated"},
		{"unknown schema id", "\x00\x7f\xff\xff\xf0\x02a", "schema id 2147483632"},
		{"truncated body", string(good[:len(good)-3]), "decoding Avro"},
		{"truncated at a field boundary", string(good[:len(good)-8]), "decoding Avro"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := c.ToConnect(topic, []byte(tc.payload))
			var de *data.Error
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.reason) || sdk.IsRetriable(err) {
				t.Fatalf("got %v, want a non-retriable data error mentioning %q", err, tc.reason)
			}
		})
	}
}

// TestAvroRegistryFailures: a registry that does not answer is retriable
// and named; one that refuses the credentials is a final error with 401.
// Apicurio as run here has no authentication, so the 401 comes from a
// local server answering as a Confluent-compatible registry does with
// wrong credentials (status 401, {"error_code":401,"message":…}); what is
// under test is the converter's handling of that answer, not the
// registry's password check.
func TestAvroRegistryFailures(t *testing.T) {
	var sawAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error_code":401,"message":"Unauthorized"}`))
	}))
	t.Cleanup(srv.Close)
	s := data.Build(data.Struct).Name("shop.Auth").Field("id", data.PrimitiveSchema(data.String)).MustSchema()
	v := data.NewStruct(s).MustPut("id", "x")

	c := newAvro(t, map[string]string{"schema.registry.url": srv.URL, "basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "alice:wrong"}, false)
	_, err := c.FromConnect("t", s, v)
	var de *data.Error
	if err == nil || !strings.Contains(err.Error(), "401") || errors.As(err, &de) || sdk.IsRetriable(err) {
		t.Fatalf("wrong credentials: got %v, want a final (non-data, non-retriable) error with 401", err)
	}
	if !strings.HasPrefix(sawAuth, "Basic ") {
		t.Errorf("the converter sent no basic auth: %q", sawAuth)
	}

	// A port nothing listens on: closed test server.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	c = newAvro(t, map[string]string{"schema.registry.url": deadURL + "," + deadURL}, false)
	_, err = c.FromConnect("t", s, v)
	if !sdk.IsRetriable(err) || !strings.Contains(err.Error(), deadURL) {
		t.Fatalf("unreachable registry: got %v, want a retriable error naming %s", err, deadURL)
	}
}
