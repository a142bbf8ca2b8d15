package schemaregistry_test

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/registrytest"
)

// TestSubjectStrategiesAndLookup: each subject name strategy (short and
// Confluent class names) registers under the subject it names, in every
// format; with auto.register.schemas=false the schema is looked up
// (missing: a data error) and use.latest.version writes with the
// subject's latest schema.
func TestSubjectStrategiesAndLookup(t *testing.T) {
	url := registrytest.URL(t)
	client := registrytest.Client(t)
	var rb [4]byte
	_, _ = rand.Read(rb[:])
	record := "sr.Rec" + hex.EncodeToString(rb[:])
	t.Cleanup(func() {
		for _, perm := range []bool{false, true} {
			_, _ = client.DeleteSubject(record, perm)
		}
	})
	s := data.Build(data.Struct).Name(record).Field("id", data.PrimitiveSchema(data.String)).MustSchema()
	v := data.NewStruct(s).MustPut("id", "x")
	for _, class := range []string{"io.confluent.connect.avro.AvroConverter", "io.confluent.connect.protobuf.ProtobufConverter", "io.confluent.connect.json.JsonSchemaConverter"} {
		short := class[strings.LastIndexByte(class, '.')+1:]
		t.Run(short, func(t *testing.T) {
			for _, tc := range []struct {
				strategy string
				subject  func(topic string) string
			}{
				{"TopicNameStrategy", func(topic string) string { return topic + "-value" }},
				{"io.confluent.kafka.serializers.subject.TopicRecordNameStrategy", func(topic string) string { return topic + "-" + record }},
			} {
				subject := registrytest.Subject(t, "value")
				topic := strings.TrimSuffix(subject, "-value")
				want := tc.subject(topic)
				if want != subject { // not a registrytest subject: deleted here
					t.Cleanup(func() {
						for _, perm := range []bool{false, true} {
							_, _ = client.DeleteSubject(want, perm)
						}
					})
				}
				c := newConverter(t, class, map[string]string{"schema.registry.url": url, "value.subject.name.strategy": tc.strategy})
				if _, err := c.FromConnect(topic, s, v); err != nil {
					t.Fatalf("%s: %v", tc.strategy, err)
				}
				if _, err := client.GetLatestSchemaMetadata(want); err != nil {
					t.Errorf("%s: nothing registered under %s: %v", tc.strategy, want, err)
				}
				// Lookup without registering finds it; use.latest.version
				// writes with it.
				for _, props := range []map[string]string{
					{"auto.register.schemas": "false"},
					{"auto.register.schemas": "false", "use.latest.version": "true"},
				} {
					props["schema.registry.url"] = url
					props["value.subject.name.strategy"] = tc.strategy
					b, err := newConverter(t, class, props).FromConnect(topic, s, v)
					if err != nil {
						t.Fatalf("%s %v: %v", tc.strategy, props, err)
					}
					if _, got, err := c.ToConnect(topic, b); err != nil || !strings.Contains(got.(*data.StructValue).String(), "id=x") {
						t.Errorf("%s %v: read back %v, %v", tc.strategy, props, got, err)
					}
				}
			}
			// RecordNameStrategy: the record's full name is the subject.
			c := newConverter(t, class, map[string]string{"schema.registry.url": url, "value.subject.name.strategy": "RecordNameStrategy"})
			if _, err := c.FromConnect("any-topic", s, v); err != nil {
				t.Fatalf("RecordNameStrategy: %v", err)
			}
			if _, err := client.GetLatestSchemaMetadata(record); err != nil {
				t.Errorf("RecordNameStrategy: nothing registered under %s: %v", record, err)
			}
			// A subject that holds nothing, without auto-registration: a
			// data error, not retriable.
			_, err := newConverter(t, class, map[string]string{"schema.registry.url": url, "auto.register.schemas": "false"}).
				FromConnect(strings.TrimSuffix(registrytest.Subject(t, "value"), "-value"), s, v)
			if err == nil || sdk.IsRetriable(err) {
				t.Errorf("lookup in an empty subject: got %v, want a non-retriable error", err)
			}
		})
	}
}
