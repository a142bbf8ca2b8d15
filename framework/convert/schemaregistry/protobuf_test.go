package schemaregistry_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	srclient "github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/protobuf"
	"github.com/jhump/protoreflect/desc/protoparse"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/internal/registrytest"
)

func newProto(t testing.TB, url string) convert.Converter {
	t.Helper()
	c, err := convert.NewSet(schemaregistry.Infos()...).New(schemaregistry.ProtobufClass, map[string]string{"schema.registry.url": url}, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.(interface{ Close() error }).Close() })
	return c
}

// orderProto is what a Protobuf producer application would compile:
// message shop.Order with a nested Address, a proto3 optional field, a
// repeated and a map field, and a google.protobuf.Timestamp.
func orderProto(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	f := func(name string, n int32, typ descriptorpb.FieldDescriptorProto_Type, label *descriptorpb.FieldDescriptorProto_Label, typeName string) *descriptorpb.FieldDescriptorProto {
		fd := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(n), Type: typ.Enum(), Label: label, JsonName: proto.String(name)}
		if typeName != "" {
			fd.TypeName = proto.String(typeName)
		}
		return fd
	}
	note := f("note", 3, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, "")
	note.Proto3Optional, note.OneofIndex = proto.Bool(true), proto.Int32(0)
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("shop/order.proto"), Package: proto.String("shop"), Syntax: proto.String("proto3"),
		Dependency: []string{"google/protobuf/timestamp.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Order"),
			Field: []*descriptorpb.FieldDescriptorProto{
				f("id", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
				f("qty", 2, descriptorpb.FieldDescriptorProto_TYPE_INT32, opt, ""),
				note,
				f("ts", 4, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".google.protobuf.Timestamp"),
				f("tags", 5, descriptorpb.FieldDescriptorProto_TYPE_STRING, rep, ""),
				f("stock", 6, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, ".shop.Order.StockEntry"),
				f("ship", 7, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".shop.Order.Address"),
			},
			OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("_note")}},
			NestedType: []*descriptorpb.DescriptorProto{
				{Name: proto.String("StockEntry"), Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)}, Field: []*descriptorpb.FieldDescriptorProto{
					f("key", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""), f("value", 2, descriptorpb.FieldDescriptorProto_TYPE_INT64, opt, "")}},
				{Name: proto.String("Address"), Field: []*descriptorpb.FieldDescriptorProto{f("city", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, "")}},
			},
		}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().Get(0)
}

// TestProtobufFromConfluentSerializer: a message written by
// confluent-kafka-go's protobuf serializer (schema registered by it, wire
// format with message indexes), through Kafka, read by the converter.
func TestProtobufFromConfluentSerializer(t *testing.T) {
	url := registrytest.URL(t)
	topic, _ := topicAndSubject(t)
	md := orderProto(t)
	msg := dynamicpb.NewMessage(md)
	set := func(m protoreflect.Message, name string, v protoreflect.Value) {
		m.Set(m.Descriptor().Fields().ByName(protoreflect.Name(name)), v)
	}
	set(msg, "id", protoreflect.ValueOfString("o-1"))
	set(msg, "qty", protoreflect.ValueOfInt32(3))
	set(msg, "note", protoreflect.ValueOfString("fragile"))
	ts := msg.NewField(md.Fields().ByName("ts"))
	set(ts.Message(), "seconds", protoreflect.ValueOfInt64(1764720000))
	set(ts.Message(), "nanos", protoreflect.ValueOfInt32(123000000))
	set(msg, "ts", ts)
	tags := msg.Mutable(md.Fields().ByName("tags")).List()
	tags.Append(protoreflect.ValueOfString("a"))
	tags.Append(protoreflect.ValueOfString("b"))
	msg.Mutable(md.Fields().ByName("stock")).Map().Set(protoreflect.ValueOfString("paris").MapKey(), protoreflect.ValueOfInt64(7))
	ship := msg.NewField(md.Fields().ByName("ship"))
	set(ship.Message(), "city", protoreflect.ValueOfString("Paris"))
	set(msg, "ship", ship)

	ser, err := protobuf.NewSerializer(registrytest.Client(t), serde.ValueSerde, protobuf.NewSerializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	payload, err := ser.Serialize(topic, msg)
	if err != nil {
		t.Fatalf("confluent serialize: %v", err)
	}
	payload = throughKafka(t, topic, payload)

	c := newProto(t, url)
	s, v, err := c.ToConnect(topic, payload)
	if err != nil {
		t.Fatalf("ToConnect: %v", err)
	}
	if s.Name != "shop.Order" {
		t.Errorf("schema name %q", s.Name)
	}
	st := v.(*data.StructValue)
	want := map[string]any{"id": "o-1", "qty": int32(3), "note": "fragile", "ts": time.UnixMilli(1764720000123).UTC(),
		"tags": []any{"a", "b"}, "stock": map[string]any{"paris": int64(7)}}
	for name, w := range want {
		if got, _ := st.Get(name); !data.ValueEqual(got, w) {
			t.Errorf("%s = %#v, want %#v", name, got, w)
		}
	}
	if f, _ := s.Field("ts"); f.Schema.Name != data.TimestampName {
		t.Errorf("ts has schema %s, want Timestamp", f.Schema)
	}
	if f, _ := s.Field("note"); !f.Schema.Optional {
		t.Error("proto3 optional note is not optional")
	}
	shipV, _ := st.Get("ship")
	if city, _ := shipV.(*data.StructValue).Get("city"); city != "Paris" {
		t.Errorf("ship.city = %v", city)
	}
	if err := data.Validate(v, s); err != nil {
		t.Error(err)
	}
}

// TestProtobufToConfluentDeserializer: a Connect struct with every
// logical type, written by the converter, read by confluent-kafka-go's
// protobuf deserializer into a dynamic message of the registered schema.
func TestProtobufToConfluentDeserializer(t *testing.T) {
	url := registrytest.URL(t)
	topic, subject := topicAndSubject(t)
	addr := data.Build(data.Struct).Name("shop.Address").Field("city", data.PrimitiveSchema(data.String)).MustSchema()
	schema := data.Build(data.Struct).Name("shop.Order").
		Field("id", data.PrimitiveSchema(data.String)).
		Field("qty", data.PrimitiveSchema(data.Int32)).
		Field("total", data.DecimalSchema(2).MustSchema()).
		Field("day", data.DateSchema().MustSchema()).
		Field("at", data.TimeSchema().MustSchema()).
		Field("ts", data.TimestampSchema().MustSchema()).
		Field("note", data.OptionalSchema(data.String)).
		Field("tags", data.ArrayOf(data.PrimitiveSchema(data.String)).MustSchema()).
		Field("stock", data.MapOf(data.PrimitiveSchema(data.String), data.PrimitiveSchema(data.Int64)).MustSchema()).
		Field("ship", addr).
		MustSchema()
	day := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	at := time.UnixMilli(13*3600000 + 5*60000 + 7250).UTC()
	ts := time.UnixMilli(1764720000123).UTC()
	v := data.NewStruct(schema).MustPut("id", "o-1").MustPut("qty", int32(3)).MustPut("total", data.NewDecimal(123456, 2)).
		MustPut("day", day).MustPut("at", at).MustPut("ts", ts).MustPut("note", "fragile").
		MustPut("tags", []any{"a", "b"}).MustPut("stock", map[string]any{"paris": int64(7)}).
		MustPut("ship", data.NewStruct(addr).MustPut("city", "Paris"))

	c := newProto(t, url)
	b, err := c.FromConnect(topic, schema, v)
	if err != nil {
		t.Fatalf("FromConnect: %v", err)
	}
	b = throughKafka(t, topic, b)

	// A consumer without generated code: the schema from the registry,
	// parsed, gives the dynamic type the deserializer fills.
	meta, err := registrytest.Client(t).GetLatestSchemaMetadata(subject)
	if err != nil {
		t.Fatal(err)
	}
	if meta.SchemaType != "PROTOBUF" {
		t.Fatalf("registered as %q", meta.SchemaType)
	}
	p := protoparse.Parser{
		Accessor:     protoparse.FileContentsFromMap(map[string]string{"order.proto": meta.Schema}),
		LookupImport: schemaregistry.LookupImport,
	}
	fds, err := p.ParseFiles("order.proto")
	if err != nil {
		t.Fatalf("parse the registered schema: %v\n%s", err, meta.Schema)
	}
	de, err := protobuf.NewDeserializer(registrytest.Client(t), serde.ValueSerde, protobuf.NewDeserializerConfig())
	if err != nil {
		t.Fatal(err)
	}
	de.MessageFactory = func(_, name string) (any, error) {
		md := fds[0].FindMessage(name)
		if md == nil {
			return nil, errors.New("no message " + name)
		}
		return dynamicpb.NewMessage(md.UnwrapMessage()), nil
	}
	out, err := de.Deserialize(topic, b)
	if err != nil {
		t.Fatalf("confluent deserialize: %v", err)
	}
	m := out.(proto.Message).ProtoReflect()
	get := func(m protoreflect.Message, name string) protoreflect.Value {
		return m.Get(m.Descriptor().Fields().ByName(protoreflect.Name(name)))
	}
	if get(m, "id").String() != "o-1" || get(m, "qty").Int() != 3 || get(m, "note").String() != "fragile" ||
		get(m, "tags").List().Len() != 2 || get(m, "stock").Map().Get(protoreflect.ValueOfString("paris").MapKey()).Int() != 7 ||
		get(get(m, "ship").Message(), "city").String() != "Paris" {
		t.Errorf("confluent read %v", m)
	}
	tsm := get(m, "ts").Message()
	if got := time.Unix(get(tsm, "seconds").Int(), get(tsm, "nanos").Int()).UTC(); !got.Equal(ts) {
		t.Errorf("ts = %v, want %v", got, ts)
	}
	dm := get(m, "day").Message()
	if get(dm, "year").Int() != 2026 || get(dm, "month").Int() != 12 || get(dm, "day").Int() != 3 {
		t.Errorf("day = %v", dm)
	}
	tm := get(m, "at").Message()
	if get(tm, "hours").Int() != 13 || get(tm, "minutes").Int() != 5 || get(tm, "seconds").Int() != 7 || get(tm, "nanos").Int() != 250000000 {
		t.Errorf("at = %v", tm)
	}
	dec := get(m, "total").Message()
	if got := data.DecimalFromBytes(get(dec, "value").Bytes(), int32(get(dec, "scale").Int())); !got.Equal(data.NewDecimal(123456, 2)) {
		t.Errorf("total = %v", got)
	}

	// And the converter reads its own bytes back, scale included.
	s2, v2, err := c.ToConnect(topic, b)
	if err != nil {
		t.Fatalf("ToConnect: %v", err)
	}
	for _, name := range []string{"total", "day", "at", "ts"} {
		got, _ := v2.(*data.StructValue).Get(name)
		want, _ := v.Get(name)
		if !data.ValueEqual(got, want) {
			t.Errorf("%s read back as %#v, want %#v", name, got, want)
		}
		f, _ := s2.Field(name)
		wf, _ := schema.Field(name)
		if f.Schema.Name != wf.Schema.Name {
			t.Errorf("%s schema %s, want %s", name, f.Schema, wf.Schema)
		}
	}
}

func TestProtobufBadInput(t *testing.T) {
	url := registrytest.URL(t)
	topic, _ := topicAndSubject(t)
	c := newProto(t, url)
	for _, p := range []string{`{"id":1}`, "\x00\x01", "\x00\x7f\xff\xff\xf1\x00\x0a"} {
		_, _, err := c.ToConnect(topic, []byte(p))
		var de *data.Error
		if !errors.As(err, &de) || sdk.IsRetriable(err) || !strings.Contains(err.Error(), map[bool]string{true: "schema id", false: "magic byte"}[p[0] == 0 && len(p) > 5]) && !strings.Contains(err.Error(), "truncated") {
			t.Errorf("%q: got %v, want a data error with the reason", p, err)
		}
	}
}

// TestProtobufEvolution: under BACKWARD, adding an optional field and
// removing it again register new versions; removing a field before others
// (which renumbers them) and changing a field's type are refused with the
// registry's message.
func TestProtobufEvolution(t *testing.T) {
	url := registrytest.URL(t)
	topic, subject := topicAndSubject(t)
	if _, err := registrytest.Client(t).UpdateCompatibility(subject, srclient.Backward); err != nil {
		t.Fatal(err)
	}
	c := newProto(t, url)
	write := func(s *data.Schema, v *data.StructValue) error {
		_, err := c.FromConnect(topic, s, v)
		return err
	}
	v1 := data.Build(data.Struct).Name("shop.Item").Field("id", data.PrimitiveSchema(data.String)).
		Field("old", data.OptionalSchema(data.String)).MustSchema()
	if err := write(v1, data.NewStruct(v1).MustPut("id", "a")); err != nil {
		t.Fatalf("v1: %v", err)
	}
	v2 := data.Build(data.Struct).Name("shop.Item").Field("id", data.PrimitiveSchema(data.String)).
		Field("old", data.OptionalSchema(data.String)).Field("color", data.OptionalSchema(data.String)).MustSchema()
	if err := write(v2, data.NewStruct(v2).MustPut("id", "b").MustPut("color", "red")); err != nil {
		t.Fatalf("adding an optional field: %v", err)
	}
	// Removing the optional field again (the last field: the remaining
	// fields keep their numbers, which the converter assigns by position).
	v3 := data.Build(data.Struct).Name("shop.Item").Field("id", data.PrimitiveSchema(data.String)).
		Field("old", data.OptionalSchema(data.String)).MustSchema()
	if err := write(v3, data.NewStruct(v3).MustPut("id", "c")); err != nil {
		t.Fatalf("removing a field: %v", err)
	}
	// That schema is v1 again: the registry accepts it as the existing
	// version rather than adding a third.
	if versions, err := registrytest.Client(t).GetAllVersions(subject); err != nil || len(versions) != 2 {
		t.Fatalf("versions: %v %v, want 2", versions, err)
	}
	// Removing a field in the middle renumbers the ones after it: the
	// registry refuses that.
	v4 := data.Build(data.Struct).Name("shop.Item").Field("old", data.OptionalSchema(data.String)).MustSchema()
	err := write(v4, data.NewStruct(v4).MustPut("old", "x"))
	var de *data.Error
	if !errors.As(err, &de) || !strings.Contains(strings.ToLower(err.Error()), "incompatible") {
		t.Fatalf("removing the first field: got %v, want the registry's refusal", err)
	}
	bad := data.Build(data.Struct).Name("shop.Item").Field("id", data.PrimitiveSchema(data.Int64)).MustSchema()
	err = write(bad, data.NewStruct(bad).MustPut("id", int64(1)))
	if !errors.As(err, &de) || !strings.Contains(strings.ToLower(err.Error()), "incompatible") {
		t.Fatalf("changing id to int64: got %v, want a data error with the registry's incompatibility message", err)
	}
	t.Logf("registry refused: %v", err)
}
