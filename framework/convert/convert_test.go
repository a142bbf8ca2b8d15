package convert

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		class string
		want  string
	}{
		{"org.apache.kafka.connect.json.JsonConverter", JSONClass},
		{"JsonConverter", JSONClass},
		{"Json", JSONClass},
		{" org.apache.kafka.connect.converters.ByteArrayConverter ", ByteArrayClass},
		{"ByteArrayConverter", ByteArrayClass},
		{"org.apache.kafka.connect.storage.StringConverter", StringClass},
		{"StringConverter", StringClass},
		{"org.apache.kafka.connect.storage.SimpleHeaderConverter", SimpleHeaderClass},
	}
	for _, tt := range tests {
		info, ok := Lookup(tt.class)
		if !ok || info.Class != tt.want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", tt.class, info.Class, ok, tt.want)
		}
	}
	if _, ok := Lookup("io.confluent.connect.avro.AvroConverter"); ok {
		t.Error("Lookup of unknown class succeeded")
	}
	_, err := New("AvroConverter", nil, false)
	if !errors.Is(err, ErrUnknownClass) || !strings.Contains(err.Error(), JSONClass) {
		t.Errorf("New(unknown) error = %v", err)
	}
	if _, err := New(SimpleHeaderClass, nil, false); !errors.Is(err, ErrUnknownClass) {
		t.Errorf("header-only class accepted as record converter: %v", err)
	}
}

func TestByteArrayConverter(t *testing.T) {
	c, err := New("ByteArrayConverter", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	in := []byte("raw bytes")
	out, err := c.FromConnect("t", nil, in)
	if err != nil || &out[0] != &in[0] {
		t.Fatalf("FromConnect copied or failed: %v", err)
	}
	if out, err := c.FromConnect("t", data.OptionalSchema(data.Bytes), nil); err != nil || out != nil {
		t.Errorf("null = %v %v", out, err)
	}
	if _, err := c.FromConnect("t", data.PrimitiveSchema(data.String), in); err == nil || err.Error() != "Invalid schema type for ByteArrayConverter: STRING" {
		t.Errorf("schema mismatch error = %v", err)
	}
	if _, err := c.FromConnect("t", nil, "text"); err == nil || err.Error() != "ByteArrayConverter is not compatible with objects of type string" {
		t.Errorf("value mismatch error = %v", err)
	}
	s, v, err := c.ToConnect("t", in)
	if err != nil || s.Type != data.Bytes || !s.Optional || !bytes.Equal(v.([]byte), in) {
		t.Errorf("ToConnect = %v %v %v", s, v, err)
	}
	if s, v, _ := c.ToConnect("t", nil); v != nil || s == nil {
		t.Errorf("ToConnect(nil) = %v %v", s, v)
	}
	var boxed any = in
	if n := testing.AllocsPerRun(100, func() { _, _ = c.FromConnect("t", nil, boxed) }); n != 0 {
		t.Errorf("FromConnect allocates %v times", n)
	}
	// Returning []byte as an interface value boxes the slice header: one
	// small allocation, nothing proportional to the record.
	if n := testing.AllocsPerRun(100, func() { _, _, _ = c.ToConnect("t", in) }); n > 1 {
		t.Errorf("ToConnect allocates %v times", n)
	}
}

func TestStringConverter(t *testing.T) {
	tests := []struct {
		encoding string
		in       string
		want     []byte
	}{
		{"", "héllo", []byte("héllo")},
		{"UTF8", "héllo", []byte("héllo")},
		{"utf-16be", "hé", []byte{0, 'h', 0, 0xe9}},
		{"UTF-16LE", "hé", []byte{'h', 0, 0xe9, 0}},
		{"UTF-16", "h", []byte{0xfe, 0xff, 0, 'h'}},
		{"ISO-8859-1", "hé€", []byte{'h', 0xe9, '?'}},
		{"US-ASCII", "hé", []byte{'h', '?'}},
	}
	for _, tt := range tests {
		props := map[string]string{}
		if tt.encoding != "" {
			props[EncodingConfig] = tt.encoding
		}
		c, err := New(StringClass, props, false)
		if err != nil {
			t.Fatalf("%s: %v", tt.encoding, err)
		}
		b, err := c.FromConnect("t", nil, tt.in)
		if err != nil || !bytes.Equal(b, tt.want) {
			t.Errorf("%s: FromConnect(%q) = %x %v, want %x", tt.encoding, tt.in, b, err, tt.want)
		}
		s, v, err := c.ToConnect("t", b)
		if err != nil || s.Type != data.String || !s.Optional {
			t.Errorf("%s: ToConnect schema %v %v", tt.encoding, s, err)
		}
		if !strings.ContainsRune(tt.in, '€') && tt.encoding != "US-ASCII" && v != tt.in {
			t.Errorf("%s: round trip = %q", tt.encoding, v)
		}
	}
	c, _ := New(StringConverter{}.class(), nil, true)
	if b, _ := c.FromConnect("t", nil, int32(42)); string(b) != "42" {
		t.Errorf("int32 → %q", b)
	}
	if b, _ := c.FromConnect("t", nil, 1.5); string(b) != "1.5" {
		t.Errorf("float → %q", b)
	}
	if b, err := c.FromConnect("t", nil, nil); b != nil || err != nil {
		t.Errorf("nil → %v %v", b, err)
	}
	_, err := New(StringClass, map[string]string{EncodingConfig: "EBCDIC"}, false)
	var errs configdef.Errors
	if !errors.As(err, &errs) || !strings.Contains(err.Error(), "Invalid value EBCDIC for configuration converter.encoding") {
		t.Errorf("bad encoding error = %v", err)
	}
}

func (StringConverter) class() string { return StringClass }

func TestConverterDefs(t *testing.T) {
	for _, info := range Builtins() {
		d := info.Def()
		if info.Record {
			if _, ok := d.Key(TypeConfig); !ok {
				t.Errorf("%s: no %s key", info.Class, TypeConfig)
			}
		}
	}
	d := jsonDef()
	vals := d.Validate(map[string]string{TypeConfig: "value", SchemasEnableConfig: "maybe", DecimalFormatConfig: "numeric"})
	var msgs []string
	for _, v := range vals {
		msgs = append(msgs, v.Errors...)
	}
	if len(msgs) != 1 || msgs[0] != "Invalid value maybe for configuration schemas.enable: Expected value to be either true or false" {
		t.Errorf("json def errors = %v", msgs)
	}
}
