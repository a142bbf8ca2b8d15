package schemaregistry

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/confluent"
	"github.com/confluentinc/confluent-kafka-go/v2/schemaregistry/serde/protobuf"
	//lint:ignore SA1019 confluent-kafka-go's protobuf serde parses registry schemas with jhump/protoreflect; parsing them the same way keeps the descriptors identical to its own
	"github.com/jhump/protoreflect/desc"
	//lint:ignore SA1019 confluent-kafka-go's protobuf serde parses registry schemas with jhump/protoreflect; parsing them the same way keeps the descriptors identical to its own
	"github.com/jhump/protoreflect/desc/protoparse"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/connectd/connectd/framework/data"
)

// ProtobufClass is Confluent's Protobuf converter class.
const ProtobufClass = "io.confluent.connect.protobuf.ProtobufConverter"

// Full names of the message types logical types map to, as Confluent's
// ProtobufData maps them.
const (
	pbTimestamp = "google.protobuf.Timestamp"
	pbDate      = "google.type.Date"
	pbTimeOfDay = "google.type.TimeOfDay"
	pbDecimal   = "confluent.type.Decimal"
)

var pbImports = map[string]string{
	pbTimestamp: "google/protobuf/timestamp.proto",
	pbDate:      "google/type/date.proto",
	pbTimeOfDay: "google/type/timeofday.proto",
	pbDecimal:   decimalImport,
}

// ProtobufConverter is Confluent's
// io.confluent.connect.protobuf.ProtobufConverter: Connect data as
// Protobuf (proto3) messages in the Confluent wire format (magic byte,
// schema id, message indexes), through confluent-kafka-go's protobuf
// serde with dynamic messages.
//
// A struct is a message (nested structs nested messages), optional
// primitives proto3 optional fields, arrays repeated fields, maps map
// fields; Timestamp, Date, Time and Decimal are google.protobuf.Timestamp,
// google.type.Date, google.type.TimeOfDay and confluent.type.Decimal (the
// Decimal's scale and precision also in the field's confluent.field_meta
// params, as Confluent writes them).
type ProtobufConverter struct {
	set    settings
	client schemaregistry.Client
	ser    *protobuf.Serializer
	de     *protobuf.Deserializer

	// Caches; a converter is used by one goroutine at a time.
	toProto  map[*data.Schema]protoreflect.MessageDescriptor
	files    map[string]*desc.FileDescriptor // parsed registry schemas by text
	fromDesc map[protoreflect.MessageDescriptor]*data.Schema
	reading  *desc.FileDescriptor // the file MessageFactory resolves names in
	record   string               // full name of the message being written
}

// Configure implements convert.Converter.
func (c *ProtobufConverter) Configure(props map[string]string, isKey bool) error {
	s, client, st, err := connect(props, isKey)
	if err != nil {
		return err
	}
	sc := protobuf.NewSerializerConfig()
	sc.AutoRegisterSchemas = s.autoRegister
	sc.UseLatestVersion = s.useLatest
	ser, err := protobuf.NewSerializer(client, st, sc)
	if err != nil {
		return fmt.Errorf("protobuf serializer: %w", err)
	}
	de, err := protobuf.NewDeserializer(client, st, protobuf.NewDeserializerConfig())
	if err != nil {
		return fmt.Errorf("protobuf deserializer: %w", err)
	}
	strategy := subjectStrategy(s.strategy, protoRecordName, &c.record)
	ser.SubjectNameStrategy, de.SubjectNameStrategy = strategy, strategy
	de.MessageFactory = c.newMessage
	c.set, c.client, c.ser, c.de = s, client, ser, de
	c.toProto = map[*data.Schema]protoreflect.MessageDescriptor{}
	c.files = map[string]*desc.FileDescriptor{}
	c.fromDesc = map[protoreflect.MessageDescriptor]*data.Schema{}
	return nil
}

// Close releases the registry client.
func (c *ProtobufConverter) Close() error {
	if c.client == nil {
		return nil
	}
	return c.client.Close()
}

var (
	protoPackage = regexp.MustCompile(`(?m)^\s*package\s+([\w.]+)\s*;`)
	protoMessage = regexp.MustCompile(`(?m)^\s*message\s+(\w+)`)
)

// protoRecordName is the full name of the schema's first message, the
// record name Confluent's strategies use for Protobuf.
func protoRecordName(info schemaregistry.SchemaInfo) (string, error) {
	m := protoMessage.FindStringSubmatch(info.Schema)
	if m == nil {
		return "", fmt.Errorf("RecordNameStrategy: the Protobuf schema declares no message")
	}
	if p := protoPackage.FindStringSubmatch(info.Schema); p != nil {
		return p[1] + "." + m[1], nil
	}
	return m[1], nil
}

// newMessage is the deserializer's MessageFactory: a dynamic message of
// the writer's type, from the file ToConnect parsed.
func (c *ProtobufConverter) newMessage(_ string, name string) (any, error) {
	if c.reading == nil {
		return nil, fmt.Errorf("no Protobuf schema resolved for message %s", name)
	}
	md := c.reading.FindMessage(name)
	if md == nil {
		return nil, fmt.Errorf("message %s not in the writer's schema", name)
	}
	return dynamicpb.NewMessage(md.UnwrapMessage()), nil
}

// FromConnect implements convert.Converter.
func (c *ProtobufConverter) FromConnect(topic string, schema *data.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	if schema == nil || schema.Type != data.Struct {
		return nil, &data.Error{Msg: fmt.Sprintf("ProtobufConverter needs a struct schema, the record has %s", schema)}
	}
	md, ok := c.toProto[schema]
	if !ok {
		var err error
		if md, err = messageDescriptor(schema); err != nil {
			return nil, err
		}
		c.toProto[schema] = md
	}
	msg := dynamicpb.NewMessage(md)
	if err := fillMessage(msg, schema, value.(*data.StructValue)); err != nil {
		return nil, err
	}
	c.record = string(md.FullName())
	b, err := c.ser.Serialize(topic, msg)
	c.record = ""
	if err != nil {
		return nil, classify(c.set.urls, "the Protobuf schema for topic "+topic, err)
	}
	return b, nil
}

// ToConnect implements convert.Converter.
func (c *ProtobufConverter) ToConnect(topic string, b []byte) (*data.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	if err := checkFrame(b); err != nil {
		return nil, nil, err
	}
	info, err := c.de.GetSchema(topic, b)
	if err != nil {
		return nil, nil, classify(c.set.urls, fmt.Sprintf("fetching schema id %d", frameID(b)), err)
	}
	fd, ok := c.files[info.Schema]
	if !ok {
		if fd, err = parseProto(info.Schema); err != nil {
			return nil, nil, &data.Error{Msg: fmt.Sprintf("Protobuf schema id %d: %v", frameID(b), err)}
		}
		c.files[info.Schema] = fd
	}
	c.reading = fd
	out, err := c.de.Deserialize(topic, b)
	c.reading = nil
	if err != nil {
		return nil, nil, classify(c.set.urls, fmt.Sprintf("decoding Protobuf with schema id %d", frameID(b)), err)
	}
	msg := out.(proto.Message).ProtoReflect()
	schema, err := c.connectSchemaOf(msg.Descriptor())
	if err != nil {
		return nil, nil, err
	}
	v, err := structOf(schema, msg)
	if err != nil {
		return nil, nil, err
	}
	return schema, v, nil
}

// parseProto parses a registry schema as confluent-kafka-go does; imports
// of the well-known and Confluent types come from the linked Go packages.
func parseProto(text string) (*desc.FileDescriptor, error) {
	p := protoparse.Parser{
		Accessor: func(name string) (io.ReadCloser, error) {
			if name == "." {
				return io.NopCloser(strings.NewReader(text)), nil
			}
			return nil, fmt.Errorf("import %q: schema references are not supported", name)
		},
		LookupImport: LookupImport,
	}
	fds, err := p.ParseFiles(".")
	if err != nil {
		return nil, err
	}
	return fds[0], nil
}

// decimalImport is the import path Confluent's schemas use for
// confluent.type.Decimal; confluent-kafka-go's Go package registers the
// same file as confluent/types/decimal.proto.
const (
	decimalImport   = "confluent/type/decimal.proto"
	decimalGoImport = "confluent/types/decimal.proto"
)

// LookupImport resolves the imports of registry schemas (well-known,
// google.type and Confluent types) from the linked Go packages, for
// protoparse.Parser.LookupImport.
func LookupImport(path string) (*desc.FileDescriptor, error) {
	if path == decimalImport {
		path = decimalGoImport
	}
	return desc.LoadFileDescriptor(path)
}

// importResolver resolves imports from the global registry, with the
// Confluent Decimal under the path Confluent's schemas import it by.
type importResolver struct{}

func (importResolver) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	if path == decimalImport {
		path = decimalGoImport
	}
	return protoregistry.GlobalFiles.FindFileByPath(path)
}

func (importResolver) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	return protoregistry.GlobalFiles.FindDescriptorByName(name)
}

// --- Connect schema → message descriptor ---

type protoBuilder struct {
	imports map[string]bool
	n       int
}

func messageDescriptor(s *data.Schema) (protoreflect.MessageDescriptor, error) {
	pkg, name := splitName(s.Name)
	b := &protoBuilder{imports: map[string]bool{}}
	if name == "" {
		name = b.defaultName()
	}
	top, err := b.message(s, name, "."+joinName(pkg, name))
	if err != nil {
		return nil, err
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String(strings.ReplaceAll(joinName(pkg, name), ".", "/") + ".proto"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{top},
	}
	if pkg != "" {
		fdp.Package = proto.String(pkg)
	}
	for imp := range b.imports {
		fdp.Dependency = append(fdp.Dependency, imp)
	}
	fd, err := protodesc.NewFile(fdp, importResolver{})
	if err != nil {
		return nil, &data.Error{Msg: fmt.Sprintf("ProtobufConverter cannot describe %s: %v", s, err)}
	}
	return fd.Messages().Get(0), nil
}

func (b *protoBuilder) defaultName() string {
	b.n++
	return "ConnectDefault" + strconv.Itoa(b.n)
}

func splitName(n string) (pkg, name string) {
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		return n[:i], n[i+1:]
	}
	return "", n
}

func joinName(pkg, name string) string {
	if pkg == "" {
		return name
	}
	return pkg + "." + name
}

// message describes struct s as message name, whose full name is full
// (leading dot); nested structs and map entries become nested types.
func (b *protoBuilder) message(s *data.Schema, name, full string) (*descriptorpb.DescriptorProto, error) {
	m := &descriptorpb.DescriptorProto{Name: proto.String(name)}
	nested := map[string]bool{}
	for i, f := range s.Fields {
		fp := &descriptorpb.FieldDescriptorProto{
			Name: proto.String(f.Name), Number: proto.Int32(int32(i + 1)), JsonName: proto.String(jsonName(f.Name)),
			Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
		}
		fs := f.Schema
		switch {
		case fs.Type == data.Array:
			if err := b.fieldType(fp, fs.Value, m, nested, full, f.Name); err != nil {
				return nil, err
			}
			fp.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
		case fs.Type == data.Map:
			entry := camel(f.Name) + "Entry"
			e := &descriptorpb.DescriptorProto{Name: proto.String(entry), Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)}}
			for j, kv := range []*data.Schema{fs.Key, fs.Value} {
				ef := &descriptorpb.FieldDescriptorProto{Name: proto.String([]string{"key", "value"}[j]), Number: proto.Int32(int32(j + 1)),
					JsonName: proto.String([]string{"key", "value"}[j]), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
				if err := b.fieldType(ef, kv, m, nested, full, f.Name); err != nil {
					return nil, err
				}
				e.Field = append(e.Field, ef)
			}
			switch fs.Key.Type {
			case data.String, data.Int32, data.Int64, data.Boolean, data.Int8, data.Int16:
			default:
				return nil, &data.Error{Msg: fmt.Sprintf("ProtobufConverter: map keys of field %s must be strings, integers or booleans, not %s", f.Name, fs.Key.Type.KafkaName())}
			}
			m.NestedType = append(m.NestedType, e)
			fp.Type = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
			fp.TypeName = proto.String(full + "." + entry)
			fp.Label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
		default:
			if err := b.fieldType(fp, fs, m, nested, full, f.Name); err != nil {
				return nil, err
			}
			if fs.Optional && fp.GetType() != descriptorpb.FieldDescriptorProto_TYPE_MESSAGE {
				fp.Proto3Optional = proto.Bool(true)
				fp.OneofIndex = proto.Int32(int32(len(m.OneofDecl)))
				m.OneofDecl = append(m.OneofDecl, &descriptorpb.OneofDescriptorProto{Name: proto.String("_" + f.Name)})
			}
		}
		m.Field = append(m.Field, fp)
	}
	return m, nil
}

// fieldType sets the type of fp for a value of schema s.
func (b *protoBuilder) fieldType(fp *descriptorpb.FieldDescriptorProto, s *data.Schema, m *descriptorpb.DescriptorProto, nested map[string]bool, full, field string) error {
	set := func(t descriptorpb.FieldDescriptorProto_Type) { fp.Type = t.Enum() }
	logical := func(name string) {
		set(descriptorpb.FieldDescriptorProto_TYPE_MESSAGE)
		fp.TypeName = proto.String("." + name)
		b.imports[pbImports[name]] = true
	}
	switch s.Name {
	case data.TimestampName:
		logical(pbTimestamp)
		return nil
	case data.DateName:
		logical(pbDate)
		return nil
	case data.TimeName:
		logical(pbTimeOfDay)
		return nil
	case data.DecimalName:
		logical(pbDecimal)
		params := map[string]string{"scale": s.Parameters[data.DecimalScaleParam]}
		if p, ok := s.Parameters[precisionParam]; ok {
			params["precision"] = p
		}
		fp.Options = &descriptorpb.FieldOptions{}
		proto.SetExtension(fp.Options, confluent.E_FieldMeta, &confluent.Meta{Params: params})
		b.imports["confluent/meta.proto"] = true
		return nil
	}
	switch s.Type {
	case data.Int8, data.Int16, data.Int32:
		set(descriptorpb.FieldDescriptorProto_TYPE_INT32)
	case data.Int64:
		set(descriptorpb.FieldDescriptorProto_TYPE_INT64)
	case data.Float32:
		set(descriptorpb.FieldDescriptorProto_TYPE_FLOAT)
	case data.Float64:
		set(descriptorpb.FieldDescriptorProto_TYPE_DOUBLE)
	case data.Boolean:
		set(descriptorpb.FieldDescriptorProto_TYPE_BOOL)
	case data.String:
		set(descriptorpb.FieldDescriptorProto_TYPE_STRING)
	case data.Bytes:
		set(descriptorpb.FieldDescriptorProto_TYPE_BYTES)
	case data.Struct:
		_, name := splitName(s.Name)
		if name == "" {
			name = b.defaultName()
		}
		if !nested[name] {
			nm, err := b.message(s, name, full+"."+name)
			if err != nil {
				return err
			}
			m.NestedType = append(m.NestedType, nm)
			nested[name] = true
		}
		set(descriptorpb.FieldDescriptorProto_TYPE_MESSAGE)
		fp.TypeName = proto.String(full + "." + name)
	default:
		return &data.Error{Msg: fmt.Sprintf("ProtobufConverter cannot map %s in field %s (nested arrays and maps are not Protobuf types)", s, field)}
	}
	return nil
}

func camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '_' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

func jsonName(s string) string {
	c := camel(s)
	if c == "" {
		return c
	}
	return strings.ToLower(c[:1]) + c[1:]
}

// --- values: Connect → message ---

func fillMessage(msg protoreflect.Message, s *data.Schema, v *data.StructValue) error {
	fields := msg.Descriptor().Fields()
	for _, f := range s.Fields {
		fd := fields.ByName(protoreflect.Name(f.Name))
		if fd == nil {
			return &data.Error{Msg: fmt.Sprintf("field %s is not in the Protobuf message", f.Name)}
		}
		val, err := v.Get(f.Name)
		if err != nil {
			return &data.Error{Msg: err.Error()}
		}
		if val == nil {
			continue
		}
		switch {
		case fd.IsList():
			list := msg.Mutable(fd).List()
			for _, e := range val.([]any) {
				if e == nil {
					return &data.Error{Msg: fmt.Sprintf("array field %s: Protobuf repeated fields cannot hold null", f.Name)}
				}
				pv, err := protoValue(fd, list.NewElement, f.Schema.Value, e)
				if err != nil {
					return err
				}
				list.Append(pv)
			}
		case fd.IsMap():
			mp := msg.Mutable(fd).Map()
			each := func(k, e any) error {
				pk, err := protoValue(fd.MapKey(), nil, f.Schema.Key, k)
				if err != nil {
					return err
				}
				pv, err := protoValue(fd.MapValue(), mp.NewValue, f.Schema.Value, e)
				if err != nil {
					return err
				}
				mp.Set(pk.MapKey(), pv)
				return nil
			}
			switch m := val.(type) {
			case map[string]any:
				for k, e := range m {
					if err := each(k, e); err != nil {
						return err
					}
				}
			case map[any]any:
				for k, e := range m {
					if err := each(k, e); err != nil {
						return err
					}
				}
			}
		default:
			pv, err := protoValue(fd, func() protoreflect.Value { return msg.NewField(fd) }, f.Schema, val)
			if err != nil {
				return err
			}
			msg.Set(fd, pv)
		}
	}
	return nil
}

func protoValue(fd protoreflect.FieldDescriptor, newMsg func() protoreflect.Value, s *data.Schema, v any) (protoreflect.Value, error) {
	if fd.Kind() == protoreflect.MessageKind {
		pv := newMsg()
		m := pv.Message()
		set := func(name string, x protoreflect.Value) {
			m.Set(m.Descriptor().Fields().ByName(protoreflect.Name(name)), x)
		}
		switch string(fd.Message().FullName()) {
		case pbTimestamp:
			t := v.(time.Time)
			set("seconds", protoreflect.ValueOfInt64(t.Unix()))
			set("nanos", protoreflect.ValueOfInt32(int32(t.Nanosecond())))
		case pbDate:
			t := v.(time.Time).UTC()
			set("year", protoreflect.ValueOfInt32(int32(t.Year())))
			set("month", protoreflect.ValueOfInt32(int32(t.Month())))
			set("day", protoreflect.ValueOfInt32(int32(t.Day())))
		case pbTimeOfDay:
			t := v.(time.Time).UTC()
			set("hours", protoreflect.ValueOfInt32(int32(t.Hour())))
			set("minutes", protoreflect.ValueOfInt32(int32(t.Minute())))
			set("seconds", protoreflect.ValueOfInt32(int32(t.Second())))
			set("nanos", protoreflect.ValueOfInt32(int32(t.Nanosecond())))
		case pbDecimal:
			d := v.(data.Decimal)
			if scale, err := data.DecimalScale(s); err == nil {
				r, err := d.Rescale(scale)
				if err != nil {
					return protoreflect.Value{}, &data.Error{Msg: fmt.Sprintf("decimal %s does not fit scale %d", d, scale)}
				}
				d = r
			}
			set("value", protoreflect.ValueOfBytes(d.UnscaledBytes()))
			set("scale", protoreflect.ValueOfInt32(d.Scale))
			if p, err := strconv.Atoi(s.Parameters[precisionParam]); err == nil {
				set("precision", protoreflect.ValueOfUint32(uint32(p)))
			}
		default:
			st, ok := v.(*data.StructValue)
			if !ok {
				return protoreflect.Value{}, &data.Error{Msg: fmt.Sprintf("a %T does not fit message %s", v, fd.Message().FullName())}
			}
			if err := fillMessage(m, st.Schema(), st); err != nil {
				return protoreflect.Value{}, err
			}
		}
		return pv, nil
	}
	switch x := v.(type) {
	case int8:
		return protoreflect.ValueOfInt32(int32(x)), nil
	case int16:
		return protoreflect.ValueOfInt32(int32(x)), nil
	case int32:
		return protoreflect.ValueOfInt32(x), nil
	case int64:
		return protoreflect.ValueOfInt64(x), nil
	case float32:
		return protoreflect.ValueOfFloat32(x), nil
	case float64:
		return protoreflect.ValueOfFloat64(x), nil
	case bool:
		return protoreflect.ValueOfBool(x), nil
	case string:
		return protoreflect.ValueOfString(x), nil
	case []byte:
		return protoreflect.ValueOfBytes(x), nil
	}
	return protoreflect.Value{}, &data.Error{Msg: fmt.Sprintf("ProtobufConverter cannot write a %T into field %s", v, fd.Name())}
}

// --- message descriptor → Connect schema, message → Connect value ---

func (c *ProtobufConverter) connectSchemaOf(md protoreflect.MessageDescriptor) (*data.Schema, error) {
	if s, ok := c.fromDesc[md]; ok {
		return s, nil
	}
	s, err := structSchema(md, false)
	if err != nil {
		return nil, err
	}
	c.fromDesc[md] = s
	return s, nil
}

func structSchema(md protoreflect.MessageDescriptor, optional bool) (*data.Schema, error) {
	b := data.Build(data.Struct).Name(string(md.FullName()))
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		fs, err := fieldSchema(fd)
		if err != nil {
			return nil, err
		}
		b.Field(string(fd.Name()), fs)
	}
	if optional {
		b.Optional()
	}
	s, err := b.Schema()
	if err != nil {
		return nil, &data.Error{Msg: err.Error()}
	}
	return s, nil
}

func fieldSchema(fd protoreflect.FieldDescriptor) (*data.Schema, error) {
	switch {
	case fd.IsMap():
		k, err := singularSchema(fd.MapKey(), false)
		if err != nil {
			return nil, err
		}
		v, err := singularSchema(fd.MapValue(), false)
		if err != nil {
			return nil, err
		}
		return data.MapOf(k, v).Optional().Schema()
	case fd.IsList():
		e, err := singularSchema(fd, false)
		if err != nil {
			return nil, err
		}
		return data.ArrayOf(e).Optional().Schema()
	}
	// Message fields and proto3 optional fields have presence: null when
	// absent. Other proto3 scalars always have a value.
	return singularSchema(fd, fd.HasPresence())
}

func singularSchema(fd protoreflect.FieldDescriptor, optional bool) (*data.Schema, error) {
	var b *data.Builder
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		b = data.Build(data.Int32)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		b = data.Build(data.Int64)
	case protoreflect.FloatKind:
		b = data.Build(data.Float32)
	case protoreflect.DoubleKind:
		b = data.Build(data.Float64)
	case protoreflect.BoolKind:
		b = data.Build(data.Boolean)
	case protoreflect.StringKind, protoreflect.EnumKind:
		b = data.Build(data.String)
	case protoreflect.BytesKind:
		b = data.Build(data.Bytes)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		switch string(fd.Message().FullName()) {
		case pbTimestamp:
			b = data.TimestampSchema()
		case pbDate:
			b = data.DateSchema()
		case pbTimeOfDay:
			b = data.TimeSchema()
		case pbDecimal:
			scale, precision := "0", ""
			if opts, ok := fd.Options().(*descriptorpb.FieldOptions); ok && opts != nil {
				if meta, ok := proto.GetExtension(opts, confluent.E_FieldMeta).(*confluent.Meta); ok && meta != nil {
					if v, ok := meta.Params["scale"]; ok {
						scale = v
					}
					precision = meta.Params["precision"]
				}
			}
			n, err := strconv.Atoi(scale)
			if err != nil {
				return nil, &data.Error{Msg: fmt.Sprintf("field %s: decimal scale %q", fd.Name(), scale)}
			}
			b = data.DecimalSchema(int32(n))
			if precision != "" {
				b.Parameter(precisionParam, precision)
			}
		default:
			return structSchema(fd.Message(), optional)
		}
	default:
		return nil, &data.Error{Msg: fmt.Sprintf("ProtobufConverter cannot map field %s of kind %s", fd.Name(), fd.Kind())}
	}
	if optional {
		b.Optional()
	}
	s, err := b.Schema()
	if err != nil {
		return nil, &data.Error{Msg: err.Error()}
	}
	return s, nil
}

func structOf(s *data.Schema, msg protoreflect.Message) (*data.StructValue, error) {
	st := data.NewStruct(s)
	fields := msg.Descriptor().Fields()
	for _, f := range s.Fields {
		fd := fields.ByName(protoreflect.Name(f.Name))
		var v any
		switch {
		case fd.IsList():
			list := msg.Get(fd).List()
			arr := make([]any, list.Len())
			for i := range arr {
				e, err := connectValue(fd, f.Schema.Value, list.Get(i))
				if err != nil {
					return nil, err
				}
				arr[i] = e
			}
			v = arr
		case fd.IsMap():
			mp := msg.Get(fd).Map()
			var err error
			if f.Schema.Key.Type == data.String {
				out := map[string]any{}
				mp.Range(func(k protoreflect.MapKey, x protoreflect.Value) bool {
					var e any
					e, err = connectValue(fd.MapValue(), f.Schema.Value, x)
					out[k.String()] = e
					return err == nil
				})
				v = out
			} else {
				out := map[any]any{}
				mp.Range(func(k protoreflect.MapKey, x protoreflect.Value) bool {
					var kv, e any
					if kv, err = connectValue(fd.MapKey(), f.Schema.Key, k.Value()); err != nil {
						return false
					}
					e, err = connectValue(fd.MapValue(), f.Schema.Value, x)
					out[kv] = e
					return err == nil
				})
				v = out
			}
			if err != nil {
				return nil, err
			}
		default:
			if fd.HasPresence() && !msg.Has(fd) {
				continue
			}
			var err error
			if v, err = connectValue(fd, f.Schema, msg.Get(fd)); err != nil {
				return nil, err
			}
		}
		if err := st.PutField(f, v); err != nil {
			return nil, &data.Error{Msg: err.Error()}
		}
	}
	return st, nil
}

func connectValue(fd protoreflect.FieldDescriptor, s *data.Schema, v protoreflect.Value) (any, error) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		m := v.Message()
		get := func(name string) protoreflect.Value {
			return m.Get(m.Descriptor().Fields().ByName(protoreflect.Name(name)))
		}
		switch s.Name {
		case data.TimestampName:
			return time.Unix(get("seconds").Int(), get("nanos").Int()).UTC().Truncate(time.Millisecond), nil
		case data.DateName:
			return time.Date(int(get("year").Int()), time.Month(get("month").Int()), int(get("day").Int()), 0, 0, 0, 0, time.UTC), nil
		case data.TimeName:
			return time.Date(1970, 1, 1, int(get("hours").Int()), int(get("minutes").Int()), int(get("seconds").Int()), int(get("nanos").Int()), time.UTC).Truncate(time.Millisecond), nil
		case data.DecimalName:
			d := data.DecimalFromBytes(get("value").Bytes(), int32(get("scale").Int()))
			if scale, err := data.DecimalScale(s); err == nil && scale != d.Scale {
				r, err := d.Rescale(scale)
				if err != nil {
					return nil, &data.Error{Msg: fmt.Sprintf("decimal %s does not fit scale %d", d, scale)}
				}
				d = r
			}
			return d, nil
		}
		return structOf(s, m)
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name()), nil
		}
		return strconv.Itoa(int(v.Enum())), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return int64(v.Uint()), nil
	}
	switch s.Type {
	case data.Int32:
		return int32(v.Int()), nil
	case data.Int64:
		return v.Int(), nil
	case data.Float32:
		return float32(v.Float()), nil
	case data.Float64:
		return v.Float(), nil
	case data.Boolean:
		return v.Bool(), nil
	case data.String:
		return v.String(), nil
	case data.Bytes:
		return v.Bytes(), nil
	}
	return nil, &data.Error{Msg: fmt.Sprintf("ProtobufConverter cannot read field %s as %s", fd.Name(), s)}
}
