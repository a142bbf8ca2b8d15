package registrytest_test

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/rest"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/jsonschema"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/protobuf"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/internal/registrytest"
)

// These tests run confluent-kafka-go's serde packages against the real
// registry and a real topic: the serializer registers the schema and
// frames the payload with its id, the record goes through Kafka, and the
// deserializer fetches the schema by that id to decode it. A registry
// that stored, numbered or returned schemas wrongly breaks one of them.

// valueTopic makes a topic whose value subject (TopicNameStrategy:
// "<topic>-value") is a registrytest subject, deleted at cleanup.
func valueTopic(t *testing.T) (topic, subject string) {
	t.Helper()
	subject = registrytest.Subject(t, "value")
	topic = strings.TrimSuffix(subject, "-value")
	kafkatest.CreateTopic(t, topic)
	return topic, subject
}

// throughKafka produces payload to topic and returns the value read back.
func throughKafka(t *testing.T, topic string, payload []byte) []byte {
	t.Helper()
	p, err := kafka.NewProducer(&kafka.ConfigMap{"bootstrap.servers": kafkatest.Bootstrap(t), "acks": "all"})
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	defer p.Close()
	done := make(chan kafka.Event, 1)
	err = p.Produce(&kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny}, Value: payload}, done)
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	select {
	case ev := <-done:
		if err := ev.(*kafka.Message).TopicPartition.Error; err != nil {
			t.Fatalf("delivery: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery report within 30s")
	}
	msgs := kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 200*time.Millisecond, 30*time.Second)
	if len(msgs) != 1 {
		t.Fatalf("read %d records from %s, want 1", len(msgs), topic)
	}
	return msgs[0].Value
}

// checkFraming asserts the Confluent wire format (magic byte 0, then the
// schema id big-endian) and that the id is the one the registry holds as
// the subject's latest version, of the expected schema type.
func checkFraming(t *testing.T, c schemaregistry.Client, subject, schemaType string, payload []byte) {
	t.Helper()
	if len(payload) < 5 || payload[0] != 0 {
		t.Fatalf("payload %x does not start with the magic byte and a schema id", payload)
	}
	meta, err := c.GetLatestSchemaMetadata(subject)
	if err != nil {
		t.Fatalf("latest schema of %s: %v", subject, err)
	}
	if got := int(binary.BigEndian.Uint32(payload[1:5])); got != meta.ID {
		t.Fatalf("payload carries schema id %d, the registry's latest %s schema has id %d", got, subject, meta.ID)
	}
	// The Confluent API leaves schemaType out for Avro.
	if got := cmpType(meta.SchemaType); got != schemaType {
		t.Fatalf("registry holds %s as %s, want %s", subject, got, schemaType)
	}
}

func cmpType(s string) string {
	if s == "" {
		return "AVRO"
	}
	return s
}

type avroOrder struct {
	ID     string `avro:"id"`
	Amount int64  `avro:"amount"`
}

func TestAvroRoundTrip(t *testing.T) {
	c := registrytest.Client(t)
	topic, subject := valueTopic(t)

	ser, err := avrov2.NewSerializer(c, serde.ValueSerde, avrov2.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	in := avroOrder{ID: "o-1", Amount: 4200}
	payload, err := ser.Serialize(topic, &in)
	if err != nil {
		t.Fatalf("serialize: %v", err)
	}
	payload = throughKafka(t, topic, payload)
	checkFraming(t, c, subject, "AVRO", payload)

	// A fresh client: the schema must come from the registry, not from the
	// serializer's cache.
	de, err := avrov2.NewDeserializer(registrytest.Client(t), serde.ValueSerde, avrov2.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	var out avroOrder
	if err := de.DeserializeInto(topic, payload, &out); err != nil {
		t.Fatalf("deserialize: %v", err)
	}
	if out != in {
		t.Fatalf("round trip: got %+v, want %+v", out, in)
	}
}

type jsonOrder struct {
	ID     string `json:"id"`
	Amount int64  `json:"amount"`
}

type jsonOrderText struct {
	ID     string `json:"id"`
	Amount string `json:"amount"`
}

// TestJSONSchemaRoundTrip also makes the registry's copy of the schema do
// work: a second serializer fetches the latest schema from the registry
// (instead of deriving it from the Go type) and validates against it, so a
// value of the wrong shape is refused and the right one framed with the
// same id. (confluent-kafka-go v2.11's JSON deserializer cannot validate
// into a Go value, so validation is checked on the serializing side.)
func TestJSONSchemaRoundTrip(t *testing.T) {
	c := registrytest.Client(t)
	topic, subject := valueTopic(t)

	sconf := jsonschema.NewSerializerConfig()
	sconf.EnableValidation = true
	ser, err := jsonschema.NewSerializer(c, serde.ValueSerde, sconf)
	if err != nil {
		t.Fatal(err)
	}
	in := jsonOrder{ID: "o-2", Amount: 17}
	payload, err := ser.Serialize(topic, &in)
	if err != nil {
		t.Fatalf("serialize: %v", err)
	}
	payload = throughKafka(t, topic, payload)
	checkFraming(t, c, subject, "JSON", payload)

	de, err := jsonschema.NewDeserializer(registrytest.Client(t), serde.ValueSerde, jsonschema.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	var out jsonOrder
	if err := de.DeserializeInto(topic, payload, &out); err != nil {
		t.Fatalf("deserialize: %v", err)
	}
	if out != in {
		t.Fatalf("round trip: got %+v, want %+v", out, in)
	}

	lconf := jsonschema.NewSerializerConfig()
	lconf.AutoRegisterSchemas = false
	lconf.UseLatestVersion = true
	lconf.EnableValidation = true
	latest, err := jsonschema.NewSerializer(registrytest.Client(t), serde.ValueSerde, lconf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := latest.Serialize(topic, &jsonOrderText{ID: "o-2", Amount: "seventeen"}); err == nil {
		t.Fatal("a string amount passed validation against the registry's schema")
	}
	again, err := latest.Serialize(topic, &in)
	if err != nil {
		t.Fatalf("serialize against the registry's latest schema: %v", err)
	}
	if !slices.Equal(again[:5], payload[:5]) {
		t.Fatalf("latest-schema serializer framed with %x, the auto-registering one with %x", again[:5], payload[:5])
	}
}

// orderType builds the protobuf message type connectd.registrytest.Order
// at run time, so the test needs no generated code.
func orderType(t *testing.T, fields ...*descriptorpb.FieldDescriptorProto) protoreflect.MessageType {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("connectd/registrytest/order.proto"),
		Package:     proto.String("connectd.registrytest"),
		Syntax:      proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("Order"), Field: fields}},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		t.Fatalf("descriptor: %v", err)
	}
	return dynamicpb.NewMessageType(fd.Messages().ByName("Order"))
}

func protoField(name string, number int32, typ descriptorpb.FieldDescriptorProto_Type) *descriptorpb.FieldDescriptorProto {
	return &descriptorpb.FieldDescriptorProto{
		Name:     proto.String(name),
		JsonName: proto.String(name),
		Number:   proto.Int32(number),
		Type:     typ.Enum(),
		Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
	}
}

func TestProtobufRoundTrip(t *testing.T) {
	c := registrytest.Client(t)
	topic, subject := valueTopic(t)

	mt := orderType(t,
		protoField("id", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING),
		protoField("amount", 2, descriptorpb.FieldDescriptorProto_TYPE_INT64))
	in := mt.New()
	fields := mt.Descriptor().Fields()
	in.Set(fields.ByName("id"), protoreflect.ValueOfString("o-3"))
	in.Set(fields.ByName("amount"), protoreflect.ValueOfInt64(99))

	ser, err := protobuf.NewSerializer(c, serde.ValueSerde, protobuf.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	payload, err := ser.Serialize(topic, in.Interface())
	if err != nil {
		t.Fatalf("serialize: %v", err)
	}
	payload = throughKafka(t, topic, payload)
	checkFraming(t, c, subject, "PROTOBUF", payload)

	de, err := protobuf.NewDeserializer(registrytest.Client(t), serde.ValueSerde, protobuf.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := de.ProtoRegistry.RegisterMessage(mt); err != nil {
		t.Fatal(err)
	}
	out, err := de.Deserialize(topic, payload)
	if err != nil {
		t.Fatalf("deserialize: %v", err)
	}
	msg, ok := out.(proto.Message)
	if !ok {
		t.Fatalf("deserialized %T, want a proto.Message", out)
	}
	if !proto.Equal(msg, in.Interface()) {
		t.Fatalf("round trip: got %v, want %v", msg, in)
	}
}

// TestBackwardCompatibility checks that the registry enforces BACKWARD on
// a subject for each schema type: a new version that adds an optional
// field is accepted, one that old data cannot be read with is refused
// with the registry's explanation, and the refused version is not stored.
// The json case also guards scripts/registry/pom.xml's everit-json-schema
// replacement: without it the registry's JSON compatibility check answers
// 500 (NoClassDefFoundError) instead of a verdict.
func TestBackwardCompatibility(t *testing.T) {
	for _, tc := range []struct {
		name         string
		schemaType   string // as sent; "" is Avro
		v1, v2, bad  string
		wantInReason string
	}{
		{
			name: "avro",
			v1:   `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`,
			v2:   `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"note","type":["null","string"],"default":null}]}`,
			// A field without a default: data written with v2 has no value for it.
			bad:          `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"note","type":["null","string"],"default":null},{"name":"qty","type":"int"}]}`,
			wantInReason: "qty",
		},
		{
			name:       "json",
			schemaType: "JSON",
			v1:         `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`,
			v2:         `{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"}},"required":["id"],"additionalProperties":false}`,
			// id changes type: no value written with v2 is valid under v3.
			bad:          `{"type":"object","properties":{"id":{"type":"integer"},"note":{"type":"string"}},"required":["id"],"additionalProperties":false}`,
			wantInReason: "/properties/id",
		},
		{
			name:       "protobuf",
			schemaType: "PROTOBUF",
			v1:         "syntax = \"proto3\";\npackage connectd.registrytest;\nmessage Order {\n  string id = 1;\n}\n",
			v2:         "syntax = \"proto3\";\npackage connectd.registrytest;\nmessage Order {\n  string id = 1;\n  string note = 2;\n}\n",
			// Field 1 changes wire type.
			bad:          "syntax = \"proto3\";\npackage connectd.registrytest;\nmessage Order {\n  int64 id = 1;\n  string note = 2;\n}\n",
			wantInReason: "not backward compatible",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := registrytest.Client(t)
			subject := registrytest.Subject(t, "value")
			if _, err := c.UpdateCompatibility(subject, schemaregistry.Backward); err != nil {
				t.Fatalf("set BACKWARD on %s: %v", subject, err)
			}
			if got, err := c.GetCompatibility(subject); err != nil || got != schemaregistry.Backward {
				t.Fatalf("compatibility of %s: %v, %v; want BACKWARD", subject, got, err)
			}
			register := func(schema string) error {
				_, err := c.Register(subject, schemaregistry.SchemaInfo{Schema: schema, SchemaType: tc.schemaType}, false)
				return err
			}
			if err := register(tc.v1); err != nil {
				t.Fatalf("register v1: %v", err)
			}
			if err := register(tc.v2); err != nil {
				t.Fatalf("v2 adds an optional field and must be accepted under BACKWARD: %v", err)
			}
			ok, err := c.TestSubjectCompatibility(subject, schemaregistry.SchemaInfo{Schema: tc.bad, SchemaType: tc.schemaType})
			if err != nil {
				t.Fatalf("compatibility check: %v", err)
			}
			if ok {
				t.Fatal("the registry's compatibility check calls the incompatible schema compatible")
			}
			err = register(tc.bad)
			var re *rest.Error
			if !errors.As(err, &re) {
				t.Fatalf("registering an incompatible schema: got %v, want a refusal from the registry", err)
			}
			// Apicurio answers HTTP 409 but leaves error_code 0 in the body
			// (the Confluent registry puts 409 there); the reason is what a
			// user reads, so that is what must name the offending change.
			if (re.Code != 409 && re.Code != 0) || !strings.Contains(re.Message, "ncompatible") || !strings.Contains(re.Message, tc.wantInReason) {
				t.Fatalf("refusal: code %d message %q, want an incompatibility naming %q", re.Code, re.Message, tc.wantInReason)
			}
			t.Logf("registry refused v3: %s", re.Message)
			versions, err := c.GetAllVersions(subject)
			if err != nil {
				t.Fatalf("versions of %s: %v", subject, err)
			}
			if !slices.Equal(versions, []int{1, 2}) {
				t.Fatalf("versions of %s after the refusal: %v, want [1 2]", subject, versions)
			}
		})
	}
}

// TestSubjectIsDeletedAtCleanup guards the isolation the other tests rely
// on: a subject from Subject is gone once its test has finished.
func TestSubjectIsDeletedAtCleanup(t *testing.T) {
	var subject string
	t.Run("registers", func(t *testing.T) {
		subject = registrytest.Subject(t, "value")
		_, err := registrytest.Client(t).Register(subject, schemaregistry.SchemaInfo{Schema: `"string"`}, false)
		if err != nil {
			t.Fatalf("register: %v", err)
		}
	})
	subjects, err := registrytest.Client(t).GetAllSubjects()
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(subjects, subject) {
		t.Fatalf("subject %s still listed after its test's cleanup", subject)
	}
}
