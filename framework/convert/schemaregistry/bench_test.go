package schemaregistry_test

import (
	"strings"
	"testing"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/protobuf"
	"github.com/hamba/avro/v2"
	"github.com/jhump/protoreflect/desc/protoparse"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/internal/registrytest"
)

// The benchmarks (go test -run '^$' -bench . -count 5) compare the converter's cost per record with
// confluent-kafka-go's serde alone on the same 1 KiB record (ten string
// fields of 100 bytes plus an id and a timestamp), schemas cached after
// the first record: what the converter adds is the mapping between
// Connect data and the serde's generic values.

const benchFields = 10

func benchSchemaJSON() string {
	var b strings.Builder
	b.WriteString(`{"type":"record","name":"Bench","namespace":"bench","fields":[{"name":"id","type":"long"},{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}}`)
	for i := range benchFields {
		b.WriteString(`,{"name":"f` + string(rune('0'+i)) + `","type":"string"}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// benchMap is the value the serde alone takes: hamba/avro's generic form.
func benchMap() map[string]any {
	m := map[string]any{"id": int64(42), "ts": data.MillisToTimestamp(1764720000000)}
	for i := range benchFields {
		m["f"+string(rune('0'+i))] = strings.Repeat("x", 100)
	}
	return m
}

func benchStruct() (*data.Schema, *data.StructValue) {
	b := data.Build(data.Struct).Name("bench.Bench").Field("id", data.PrimitiveSchema(data.Int64)).Field("ts", data.TimestampSchema().MustSchema())
	for i := range benchFields {
		b.Field("f"+string(rune('0'+i)), data.PrimitiveSchema(data.String))
	}
	s := b.MustSchema()
	v := data.NewStruct(s).MustPut("id", int64(42)).MustPut("ts", data.MillisToTimestamp(1764720000000))
	for i := range benchFields {
		v.MustPut("f"+string(rune('0'+i)), strings.Repeat("x", 100))
	}
	return s, v
}

func BenchmarkAvro(b *testing.B) {
	url := registrytest.URL(b)
	topic := strings.TrimSuffix(registrytest.Subject(b, "value"), "-value")
	s, v := benchStruct()
	c := newAvro(b, map[string]string{"schema.registry.url": url}, false)
	payload, err := c.FromConnect(topic, s, v)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("record: %d bytes in the wire format", len(payload))

	// The serde alone: serialize hamba/avro's generic map with the schema
	// id the converter registered (UseSchemaID, as the converter does).
	meta, err := registrytest.Client(b).GetLatestSchemaMetadata(topic + "-value")
	if err != nil {
		b.Fatal(err)
	}
	sc := avrov2.NewSerializerConfig()
	sc.AutoRegisterSchemas, sc.UseSchemaID = false, meta.ID
	ser, err := avrov2.NewSerializer(registrytest.Client(b), serde.ValueSerde, sc)
	if err != nil {
		b.Fatal(err)
	}
	de, err := avrov2.NewDeserializer(registrytest.Client(b), serde.ValueSerde, avrov2.NewDeserializerConfig())
	if err != nil {
		b.Fatal(err)
	}
	_ = avro.MustParse(benchSchemaJSON())
	m := benchMap()

	b.Run("serde-serialize", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if _, err := ser.Serialize(topic, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("converter-FromConnect", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if _, err := c.FromConnect(topic, s, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("serde-deserialize", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			var out any
			if err := de.DeserializeInto(topic, payload, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("converter-ToConnect", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if _, _, err := c.ToConnect(topic, payload); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkProtobuf(b *testing.B) {
	url := registrytest.URL(b)
	topic := strings.TrimSuffix(registrytest.Subject(b, "value"), "-value")
	s, v := benchStruct()
	c := newProtoBench(b, url)
	payload, err := c.FromConnect(topic, s, v)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("record: %d bytes in the wire format", len(payload))

	// The serde alone: a dynamic message of the same type, filled once
	// (what an application holding its messages serializes).
	meta, err := registrytest.Client(b).GetLatestSchemaMetadata(topic + "-value")
	if err != nil {
		b.Fatal(err)
	}
	p := protoparse.Parser{Accessor: protoparse.FileContentsFromMap(map[string]string{"b.proto": meta.Schema}), LookupImport: schemaregistry.LookupImport}
	fds, err := p.ParseFiles("b.proto")
	if err != nil {
		b.Fatal(err)
	}
	md := fds[0].GetMessageTypes()[0].UnwrapMessage()
	msg := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(payload[6:], msg); err != nil { // magic, id, one message index (0)
		b.Fatal(err)
	}
	ser, err := protobuf.NewSerializer(registrytest.Client(b), serde.ValueSerde, protobuf.NewSerializerConfig())
	if err != nil {
		b.Fatal(err)
	}
	de, err := protobuf.NewDeserializer(registrytest.Client(b), serde.ValueSerde, protobuf.NewDeserializerConfig())
	if err != nil {
		b.Fatal(err)
	}
	de.MessageFactory = func(string, string) (any, error) { return dynamicpb.NewMessage(md), nil }

	b.Run("serde-serialize", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if _, err := ser.Serialize(topic, msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("converter-FromConnect", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if _, err := c.FromConnect(topic, s, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("serde-deserialize", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if _, err := de.Deserialize(topic, payload); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("converter-ToConnect", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if _, _, err := c.ToConnect(topic, payload); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func newProtoBench(b *testing.B, url string) convert.Converter { return newProto(b, url) }
