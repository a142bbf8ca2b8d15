package worker_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/avrov2"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/jsonschema"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/protobuf"
	"github.com/hamba/avro/v2"
	//lint:ignore SA1019 confluent-kafka-go's protobuf serde parses registry schemas with jhump/protoreflect; parsing them the same way keeps the descriptors identical to its own
	"github.com/jhump/protoreflect/desc/protoparse"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
	"github.com/connectd/connectd/internal/registrytest"
)

// These tests run the Schema Registry converters where they run in
// production: inside the plugin processes (TestFileSink, TestSource, built
// with plugins.WithConverters), against the real broker and registry,
// with records written or read by confluent-kafka-go's own Avro serde.

const srOrderSchema = `{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"id","type":"string"},
 {"name":"total","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"note","type":["null","string"],"default":null}
]}`

type srOrder struct {
	ID    string    `avro:"id"`
	Total *big.Rat  `avro:"total"`
	Day   time.Time `avro:"day"`
	TS    time.Time `avro:"ts"`
	Note  *string   `avro:"note"`
}

func (*srOrder) Schema() avro.Schema { return avro.MustParse(srOrderSchema) }

// srTopic creates a topic whose value subject is a registrytest subject.
func srTopic(t *testing.T) string {
	t.Helper()
	topic := strings.TrimSuffix(registrytest.Subject(t, "value"), "-value")
	kafkatest.CreateTopic(t, topic)
	return topic
}

func produceValues(t *testing.T, topic string, values [][]byte) {
	t.Helper()
	produceInput(t, topic, 1, len(values), func(i int) []byte { return values[i] })
}

func appliedLines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func srSinkProps(topic, file, url string) map[string]string {
	p := sinkProps(topic, file, 1)
	p["value.converter"] = "io.confluent.connect.avro.AvroConverter"
	p["value.converter.schema.registry.url"] = url
	delete(p, "value.converter.schemas.enable")
	return p
}

// sinkThroughConverter produces values to topic, runs the test file sink
// on it with converter as its value converter, and returns the lines the
// sink applied once every record is committed; each value must apply.
func sinkThroughConverter(t *testing.T, topic, url, converter string, values [][]byte) []string {
	t.Helper()
	produceValues(t, topic, values)
	e := newEnv(t)
	w, st := e.start(e.config(false))
	name := kafkatest.UniqueName(t, "s")
	file := filepath.Join(t.TempDir(), "applied.tsv")
	props := srSinkProps(topic, file, url)
	props["value.converter"] = converter
	e.run(w, name, props)
	st.waitFor(t, name+"-0", worker.StateRunning, 30*time.Second)
	waitCommittedTo(t, name, topic, 1, len(values), time.Minute)
	lines := appliedLines(t, file)
	if len(lines) != len(values) {
		t.Fatalf("applied %d records, want %d: %q", len(lines), len(values), lines)
	}
	return lines
}

// TestSinkAvroFromConfluentProducer: Avro records produced with
// confluent-kafka-go's serializer reach a sink as Connect structs with
// their logical types; a record without the magic byte, one naming an
// unknown schema id and a truncated one go to the dead-letter queue with
// the reason, and the good records around them flow on.
func TestSinkAvroFromConfluentProducer(t *testing.T) {
	url := registrytest.URL(t)
	topic := srTopic(t)
	ser, err := avrov2.NewSerializer(registrytest.Client(t), serde.ValueSerde, avrov2.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	var values [][]byte
	for i := range 3 {
		note := "n" + fmt.Sprint(i)
		in := srOrder{ID: fmt.Sprintf("o-%d", i), Total: big.NewRat(int64(1000+i), 100),
			Day: time.Date(2026, 12, 1+i, 0, 0, 0, 0, time.UTC), TS: time.UnixMilli(1764720000000 + int64(i)).UTC(), Note: &note}
		b, err := ser.Serialize(topic, &in)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, b)
		if i == 0 {
			good := b
			values = append(values, []byte(`{"id":"plain json"}`))       // no magic byte
			values = append(values, []byte("\x00\x7f\xff\xff\xf0\x02a")) // unknown schema id
			values = append(values, good[:len(good)-4])                  // truncated
		}
	}
	produceValues(t, topic, values)

	e := newEnv(t)
	dlq := kafkatest.UniqueName(t, "dlq")
	t.Cleanup(func() { kafkatest.DeleteTopics(t, dlq) })
	file := filepath.Join(t.TempDir(), "applied.tsv")
	w, st := e.start(e.config(false))
	name := kafkatest.UniqueName(t, "s")
	e.run(w, name, dlqProps(srSinkProps(topic, file, url), dlq, "all"))
	st.waitFor(t, name+"-0", worker.StateRunning, 30*time.Second)
	waitCommittedTo(t, name, topic, 1, len(values), time.Minute)

	lines := appliedLines(t, file)
	if len(lines) != 3 {
		t.Fatalf("sink applied %d records, want the 3 good ones:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, l := range lines {
		for _, part := range []string{fmt.Sprintf("id=o-%d", i), "total=" + big.NewRat(int64(1000+i), 100).FloatString(2), fmt.Sprintf("note=n%d", i)} {
			if !strings.Contains(l, part) {
				t.Errorf("applied record %d %q lacks %q", i, l, part)
			}
		}
	}
	dead := kafkatest.ReadAll(t, dlq, kafkatest.ReadCommitted, 200*time.Millisecond, time.Minute)
	reasons := []string{"magic byte", "schema id 2147483632", "decoding Avro"}
	if len(dead) != len(reasons) {
		t.Fatalf("%d dead-letter records, want %d", len(dead), len(reasons))
	}
	for i, m := range dead {
		h := headers(m)
		if h["__connect.errors.stage"] != "VALUE_CONVERTER" || h["__connect.errors.class.name"] != "io.confluent.connect.avro.AvroConverter" ||
			!strings.Contains(h["__connect.errors.exception.message"], reasons[i]) {
			t.Errorf("dead-letter record %d: stage %q class %q message %q, want VALUE_CONVERTER, AvroConverter, %q",
				i, h["__connect.errors.stage"], h["__connect.errors.class.name"], h["__connect.errors.exception.message"], reasons[i])
		}
		if string(m.Value) != string(values[i+1]) {
			t.Errorf("dead-letter record %d carries %q, want the original bytes %q", i, m.Value, values[i+1])
		}
	}
}

// TestSinkAvroToleranceNone: under errors.tolerance=none a record without
// the magic byte fails the task, and the trace says why.
func TestSinkAvroToleranceNone(t *testing.T) {
	url := registrytest.URL(t)
	topic := srTopic(t)
	produceValues(t, topic, [][]byte{[]byte(`{"id":"plain json"}`)})
	e := newEnv(t)
	w, st := e.start(e.config(false))
	name := kafkatest.UniqueName(t, "s")
	e.run(w, name, srSinkProps(topic, filepath.Join(t.TempDir(), "applied.tsv"), url))
	ev := st.waitFor(t, name+"-0", worker.StateFailed, time.Minute)
	if !strings.Contains(ev.trace, "magic byte") {
		t.Fatalf("FAILED trace %q does not give the reason", ev.trace)
	}
}

// TestSinkAvroRegistryFailures: a registry that does not answer is retried
// within errors.retry.timeout and then fails the task with the URL in the
// trace; a registry answering 401 fails the task with the 401. (Apicurio
// as run for the tests has no authentication: the 401 comes from a local
// server answering as a Confluent-compatible registry does.)
func TestSinkAvroRegistryFailures(t *testing.T) {
	ser, err := avrov2.NewSerializer(registrytest.Client(t), serde.ValueSerde, avrov2.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	topic := srTopic(t)
	b, err := ser.Serialize(topic, &srOrder{ID: "x", Total: big.NewRat(1, 1), Day: time.Unix(0, 0).UTC(), TS: time.Unix(0, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	produceValues(t, topic, [][]byte{b})

	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	unauth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error_code":401,"message":"Unauthorized"}`))
	}))
	t.Cleanup(unauth.Close)

	for _, tc := range []struct {
		name, url string
		extra     map[string]string
		want      []string
	}{
		{"unreachable", deadURL, map[string]string{"errors.retry.timeout": "2000", "errors.retry.delay.max.ms": "200"}, []string{deadURL, "unreachable"}},
		{"unauthorized", unauth.URL, map[string]string{"value.converter.basic.auth.credentials.source": "USER_INFO", "value.converter.basic.auth.user.info": "alice:wrong"}, []string{"401", "credentials"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			cfg := e.config(false)
			w, st := e.start(cfg)
			name := kafkatest.UniqueName(t, "s")
			props := srSinkProps(topic, filepath.Join(t.TempDir(), "applied.tsv"), tc.url)
			for k, v := range tc.extra {
				props[k] = v
			}
			e.run(w, name, props)
			ev := st.waitFor(t, name+"-0", worker.StateFailed, time.Minute)
			for _, w := range tc.want {
				if !strings.Contains(ev.trace, w) {
					t.Errorf("FAILED trace %q lacks %q", firstLine(ev.trace), w)
				}
			}
			if tc.name == "unreachable" {
				if v := metricSum(t, cfg, "connectd_task_retries_total", map[string]string{"connector": name, "stage": "VALUE_CONVERTER"}); v < 1 {
					t.Errorf("connectd_task_retries_total = %v, want retries before failing", v)
				}
			}
		})
	}
}

// TestSourceAvroToConfluentConsumer: Connect structs written by a source
// with AvroConverter (registering the derived schema) are read back by
// confluent-kafka-go's deserializer, field for field, logical types
// included.
func TestSourceAvroToConfluentConsumer(t *testing.T) {
	url := registrytest.URL(t)
	topic := srTopic(t)
	e := newEnv(t)
	w, st := e.start(e.config(false))
	name := kafkatest.UniqueName(t, "src")
	const n = 6
	e.run(w, name, map[string]string{
		"connector.class": "TestSource", "tasks.max": "1", "topic": topic, "count": fmt.Sprint(n), "value.schema": "order",
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "io.confluent.connect.avro.AvroConverter", "value.converter.schema.registry.url": url,
	})
	st.waitFor(t, name+"-0", worker.StateRunning, 30*time.Second)
	var msgs []*kafka.Message
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		msgs = kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 200*time.Millisecond, 30*time.Second)
		return len(msgs) >= n, fmt.Sprintf("%d of %d records; status %s", len(msgs), n, st.String())
	})
	de, err := avrov2.NewDeserializer(registrytest.Client(t), serde.ValueSerde, avrov2.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	type order struct {
		Seq   int64            `avro:"seq"`
		Total *big.Rat         `avro:"total"`
		Day   time.Time        `avro:"day"`
		At    time.Duration    `avro:"at"`
		TS    time.Time        `avro:"ts"`
		Note  *string          `avro:"note"`
		Tags  []string         `avro:"tags"`
		Stock map[string]int32 `avro:"stock"`
	}
	for _, m := range msgs[:n] {
		var o order
		if err := de.DeserializeInto(topic, m.Value, &o); err != nil {
			t.Fatalf("confluent deserializer: %v", err)
		}
		seq := o.Seq
		if string(m.Key) != fmt.Sprintf("k%d", seq) {
			t.Errorf("key %q for seq %d", m.Key, seq)
		}
		wantNote := seq%2 == 0
		if o.Total.Cmp(big.NewRat(seq*100+25, 100)) != 0 ||
			!o.Day.Equal(time.UnixMilli((20000+seq)*86400000).UTC()) ||
			o.At != time.Duration(seq*1000+7)*time.Millisecond ||
			!o.TS.Equal(time.UnixMilli(1764720000000+seq)) ||
			(o.Note != nil) != wantNote || (wantNote && *o.Note != "even") ||
			len(o.Tags) != 1 || o.Tags[0] != fmt.Sprintf("t%d", seq) || o.Stock["s"] != int32(seq) {
			t.Errorf("seq %d read as %+v (total %s)", seq, o, o.Total.FloatString(2))
		}
	}
}

// TestSourceProtobufToConfluentConsumer: TestSource's order structs
// written with ProtobufConverter are read by confluent-kafka-go's
// protobuf deserializer (dynamic messages of the registered schema),
// logical types included.
func TestSourceProtobufToConfluentConsumer(t *testing.T) {
	url := registrytest.URL(t)
	topic := srTopic(t)
	e := newEnv(t)
	w, st := e.start(e.config(false))
	name := kafkatest.UniqueName(t, "src")
	const n = 4
	e.run(w, name, map[string]string{
		"connector.class": "TestSource", "tasks.max": "1", "topic": topic, "count": fmt.Sprint(n), "value.schema": "order",
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "io.confluent.connect.protobuf.ProtobufConverter", "value.converter.schema.registry.url": url,
	})
	var msgs []*kafka.Message
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		msgs = kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 200*time.Millisecond, 30*time.Second)
		return len(msgs) >= n, fmt.Sprintf("%d of %d records; status %s", len(msgs), n, st.String())
	})
	meta, err := registrytest.Client(t).GetLatestSchemaMetadata(topic + "-value")
	if err != nil {
		t.Fatal(err)
	}
	p := protoparse.Parser{Accessor: protoparse.FileContentsFromMap(map[string]string{"o.proto": meta.Schema}), LookupImport: schemaregistry.LookupImport}
	fds, err := p.ParseFiles("o.proto")
	if err != nil {
		t.Fatalf("parse the registered schema: %v\n%s", err, meta.Schema)
	}
	de, err := protobuf.NewDeserializer(registrytest.Client(t), serde.ValueSerde, protobuf.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	de.MessageFactory = func(_, name string) (any, error) {
		return dynamicpb.NewMessage(fds[0].FindMessage(name).UnwrapMessage()), nil
	}
	for _, m := range msgs[:n] {
		out, err := de.Deserialize(topic, m.Value)
		if err != nil {
			t.Fatalf("confluent deserializer: %v", err)
		}
		msg := out.(proto.Message).ProtoReflect()
		get := func(m protoreflect.Message, name string) protoreflect.Value {
			return m.Get(m.Descriptor().Fields().ByName(protoreflect.Name(name)))
		}
		seq := get(msg, "seq").Int()
		ts := get(msg, "ts").Message()
		day := get(msg, "day").Message()
		at := get(msg, "at").Message()
		dec := get(msg, "total").Message()
		total := new(big.Int).SetBytes(get(dec, "value").Bytes()) // non-negative here
		gotDay := time.Date(int(get(day, "year").Int()), time.Month(get(day, "month").Int()), int(get(day, "day").Int()), 0, 0, 0, 0, time.UTC)
		hasNote := msg.Has(msg.Descriptor().Fields().ByName("note"))
		if string(m.Key) != fmt.Sprintf("k%d", seq) ||
			!time.Unix(get(ts, "seconds").Int(), get(ts, "nanos").Int()).Equal(time.UnixMilli(1764720000000+seq)) ||
			!gotDay.Equal(time.UnixMilli((20000+seq)*86400000).UTC()) ||
			get(at, "seconds").Int() != (seq*1000+7)/1000%60 || get(at, "nanos").Int() != 7000000 ||
			total.Int64() != seq*100+25 || get(dec, "scale").Int() != 2 ||
			hasNote != (seq%2 == 0) || get(msg, "tags").List().Get(0).String() != fmt.Sprintf("t%d", seq) ||
			get(msg, "stock").Map().Get(protoreflect.ValueOfString("s").MapKey()).Int() != seq {
			t.Errorf("seq %d read as %v", seq, msg)
		}
	}
}

// TestSinkProtobufFromConfluentProducer: messages written by
// confluent-kafka-go's protobuf serializer reach a sink as structs.
func TestSinkProtobufFromConfluentProducer(t *testing.T) {
	url := registrytest.URL(t)
	topic := srTopic(t)
	p := protoparse.Parser{Accessor: protoparse.FileContentsFromMap(map[string]string{"shop/item.proto": `syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
message Item {
  string id = 1;
  optional string note = 2;
  google.protobuf.Timestamp ts = 3;
  repeated int64 sizes = 4;
}`}), LookupImport: schemaregistry.LookupImport}
	fds, err := p.ParseFiles("shop/item.proto")
	if err != nil {
		t.Fatal(err)
	}
	md := fds[0].FindMessage("shop.Item").UnwrapMessage()
	ser, err := protobuf.NewSerializer(registrytest.Client(t), serde.ValueSerde, protobuf.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	var values [][]byte
	for i := range 3 {
		m := dynamicpb.NewMessage(md)
		f := md.Fields()
		m.Set(f.ByName("id"), protoreflect.ValueOfString(fmt.Sprintf("i-%d", i)))
		if i == 1 {
			m.Set(f.ByName("note"), protoreflect.ValueOfString("one"))
		}
		ts := m.NewField(f.ByName("ts"))
		ts.Message().Set(ts.Message().Descriptor().Fields().ByName("seconds"), protoreflect.ValueOfInt64(1764720000+int64(i)))
		m.Set(f.ByName("ts"), ts)
		m.Mutable(f.ByName("sizes")).List().Append(protoreflect.ValueOfInt64(int64(10 * i)))
		b, err := ser.Serialize(topic, m)
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, b)
	}
	lines := sinkThroughConverter(t, topic, url, "io.confluent.connect.protobuf.ProtobufConverter", values)
	for i, l := range lines {
		want := []string{fmt.Sprintf("id=i-%d", i), fmt.Sprintf("sizes=[%d]", 10*i),
			"ts=" + time.Unix(1764720000+int64(i), 0).UTC().Format("2006-01-02T15:04:05.000Z")}
		if i == 1 {
			want = append(want, "note=one")
		} else if strings.Contains(l, "note=") {
			t.Errorf("record %d: unset optional note applied as a value: %q", i, l)
		}
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Errorf("record %d %q lacks %q", i, l, w)
			}
		}
	}
}

// TestJSONSchemaThroughWorker: documents written by confluent-kafka-go's
// jsonschema serializer reach a sink as structs; TestSource's order
// structs written with JsonSchemaConverter are read by confluent's
// jsonschema deserializer, logical types in their JSON forms.
func TestJSONSchemaThroughWorker(t *testing.T) {
	url := registrytest.URL(t)
	type item struct {
		ID    string   `json:"id"`
		Sizes []int64  `json:"sizes"`
		Note  *string  `json:"note,omitempty"`
		Ratio float64  `json:"ratio"`
		Tags  []string `json:"tags"`
	}
	t.Run("sink", func(t *testing.T) {
		topic := srTopic(t)
		ser, err := jsonschema.NewSerializer(registrytest.Client(t), serde.ValueSerde, jsonschema.NewSerializerConfig())
		if err != nil {
			t.Fatal(err)
		}
		var values [][]byte
		for i := range 3 {
			b, err := ser.Serialize(topic, &item{ID: fmt.Sprintf("i-%d", i), Sizes: []int64{int64(i) << 55}, Ratio: 0.5, Tags: []string{"x"}})
			if err != nil {
				t.Fatal(err)
			}
			values = append(values, b)
		}
		lines := sinkThroughConverter(t, topic, url, "io.confluent.connect.json.JsonSchemaConverter", values)
		for i, l := range lines {
			for _, w := range []string{fmt.Sprintf("id=i-%d", i), fmt.Sprintf("sizes=[%d]", int64(i)<<55), "ratio=0.5"} {
				if !strings.Contains(l, w) {
					t.Errorf("record %d %q lacks %q", i, l, w)
				}
			}
		}
	})
	t.Run("source", func(t *testing.T) {
		topic := srTopic(t)
		e := newEnv(t)
		w, st := e.start(e.config(false))
		name := kafkatest.UniqueName(t, "src")
		const n = 4
		e.run(w, name, map[string]string{
			"connector.class": "TestSource", "tasks.max": "1", "topic": topic, "count": fmt.Sprint(n), "value.schema": "order",
			"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
			"value.converter": "io.confluent.connect.json.JsonSchemaConverter", "value.converter.schema.registry.url": url,
		})
		var msgs []*kafka.Message
		kafkatest.Eventually(t, time.Minute, func() (bool, string) {
			msgs = kafkatest.ReadAll(t, topic, kafkatest.ReadCommitted, 200*time.Millisecond, 30*time.Second)
			return len(msgs) >= n, fmt.Sprintf("%d of %d records; status %s", len(msgs), n, st.String())
		})
		de, err := jsonschema.NewDeserializer(registrytest.Client(t), serde.ValueSerde, jsonschema.NewDeserializerConfig())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs[:n] {
			var o struct {
				Seq   int64            `json:"seq"`
				Total json.Number      `json:"total"`
				Day   int32            `json:"day"`
				At    int32            `json:"at"`
				TS    int64            `json:"ts"`
				Note  *string          `json:"note"`
				Tags  []string         `json:"tags"`
				Stock map[string]int32 `json:"stock"`
			}
			if err := de.DeserializeInto(topic, m.Value, &o); err != nil {
				t.Fatalf("confluent deserializer: %v", err)
			}
			seq := o.Seq
			if o.Total.String() != new(big.Rat).SetFrac64(seq*100+25, 100).FloatString(2) || o.Day != int32(20000+seq) ||
				o.At != int32(seq*1000+7) || o.TS != 1764720000000+seq || (o.Note != nil) != (seq%2 == 0) ||
				len(o.Tags) != 1 || o.Stock["s"] != int32(seq) {
				t.Errorf("seq %d read as %+v", seq, o)
			}
		}
	})
}
