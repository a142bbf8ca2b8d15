package transform

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
)

func mustTransform(t *testing.T, class string, props map[string]string) Transformation {
	t.Helper()
	info, ok := LookupTransformation(class)
	if !ok {
		t.Fatalf("unknown class %s", class)
	}
	tr := info.New()
	if err := tr.Configure(props); err != nil {
		t.Fatalf("%s: %v", class, err)
	}
	return tr
}

func apply(t *testing.T, tr Transformation, r *Record) *Record {
	t.Helper()
	keep, err := tr.Apply(r)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if !keep {
		t.Fatal("record dropped")
	}
	return r
}

func TestRegistry(t *testing.T) {
	for _, tt := range []struct{ name, class string }{
		{"InsertField$Value", "org.apache.kafka.connect.transforms.InsertField$Value"},
		{"org.apache.kafka.connect.transforms.InsertField$Key", "org.apache.kafka.connect.transforms.InsertField$Key"},
		{"ReplaceField$Value", pkg + "ReplaceField$Value"},
		{"MaskField$Key", pkg + "MaskField$Key"},
		{"ValueToKey", pkg + "ValueToKey"},
		{"ExtractField$Key", pkg + "ExtractField$Key"},
		{"Cast$Value", pkg + "Cast$Value"},
		{"RegexRouter", pkg + "RegexRouter"},
		{"TimestampRouter", pkg + "TimestampRouter"},
		{"Filter", pkg + "Filter"},
	} {
		info, ok := LookupTransformation(tt.name)
		if !ok || info.Class != tt.class {
			t.Errorf("LookupTransformation(%s) = %s %v", tt.name, info.Class, ok)
		}
	}
	for _, name := range []string{"TopicNameMatches", predPkg + "HasHeaderKey", "RecordIsTombstone"} {
		if _, ok := LookupPredicate(name); !ok {
			t.Errorf("LookupPredicate(%s) failed", name)
		}
	}
	if _, ok := LookupTransformation("InsertField"); ok {
		t.Error("InsertField without $Key/$Value resolved")
	}
	// Every class has a usable definition.
	for _, info := range Transformations() {
		if info.New().Def() == nil {
			t.Errorf("%s: nil Def", info.Class)
		}
	}
}

// Kafka's InsertFieldTest examples.
func TestInsertField(t *testing.T) {
	props := map[string]string{
		"topic.field": "topic_field!", "partition.field": "partition_field", "timestamp.field": "timestamp_field?",
		"static.field": "instance_id", "static.value": "my-instance-id",
	}
	ts := time.UnixMilli(1483425001864)

	t.Run("schemaless", func(t *testing.T) {
		tr := mustTransform(t, "InsertField$Value", props)
		in := map[string]any{"magic": int64(42)}
		r := apply(t, tr, &Record{Topic: "test", Partition: 0, Value: in, Timestamp: ts})
		want := map[string]any{"magic": int64(42), "topic_field": "test", "partition_field": int32(0),
			"timestamp_field": int64(1483425001864), "instance_id": "my-instance-id"}
		if !data.ValueEqual(r.Value, want) {
			t.Errorf("value = %v", r.Value)
		}
		if len(in) != 1 {
			t.Error("input map modified")
		}
	})
	t.Run("with schema", func(t *testing.T) {
		tr := mustTransform(t, "InsertField$Value", props)
		s := data.Build(data.Struct).Name("name").Version(1).Doc("doc").Field("magic", data.PrimitiveSchema(data.Int64)).MustSchema()
		v := data.NewStruct(s).MustPut("magic", int64(42))
		r := apply(t, tr, &Record{Topic: "test", Partition: 0, ValueSchema: s, Value: v, Timestamp: ts})
		us := r.ValueSchema
		if us.Name != "name" || us.Version != 1 || us.Doc != "doc" || len(us.Fields) != 5 {
			t.Fatalf("schema = %+v", us)
		}
		checks := []struct {
			field    string
			typ      data.Type
			optional bool
			logical  string
			value    any
		}{
			{"magic", data.Int64, false, "", int64(42)},
			{"topic_field", data.String, false, "", "test"},
			{"partition_field", data.Int32, true, "", int32(0)},
			{"timestamp_field", data.Int64, true, data.TimestampName, ts},
			{"instance_id", data.String, true, "", "my-instance-id"},
		}
		st := r.Value.(*data.StructValue)
		for _, c := range checks {
			f, _ := us.Field(c.field)
			if f.Schema.Type != c.typ || f.Schema.Optional != c.optional || f.Schema.Name != c.logical {
				t.Errorf("%s schema = %+v", c.field, f.Schema)
			}
			if got, _ := st.Get(c.field); !data.ValueEqual(got, c.value) {
				t.Errorf("%s = %v", c.field, got)
			}
		}
		// The derived schema is reused for the next record.
		r2 := apply(t, tr, &Record{Topic: "test", ValueSchema: s, Value: v, Partition: sdk.AnyPartition, Timestamp: ts})
		if r2.ValueSchema != us {
			t.Error("schema not cached")
		}
		if pv, _ := r2.Value.(*data.StructValue).Get("partition_field"); pv != nil {
			t.Errorf("partition inserted without a partition: %v", pv)
		}
	})
	t.Run("docs example: static field on a map", func(t *testing.T) {
		tr := mustTransform(t, "org.apache.kafka.connect.transforms.InsertField$Value",
			map[string]string{"static.field": "data_source", "static.value": "test-file-source"})
		r := apply(t, tr, &Record{Topic: "t", Value: map[string]any{"line": "foo"}})
		if !data.ValueEqual(r.Value, map[string]any{"line": "foo", "data_source": "test-file-source"}) {
			t.Errorf("value = %v", r.Value)
		}
	})
	t.Run("tombstone passes", func(t *testing.T) {
		tr := mustTransform(t, "InsertField$Value", props)
		r := apply(t, tr, &Record{Topic: "t"})
		if r.Value != nil || r.ValueSchema != nil {
			t.Error("tombstone changed")
		}
	})
	t.Run("key, offset on sink", func(t *testing.T) {
		tr := mustTransform(t, "InsertField$Key", map[string]string{"offset.field": "off"})
		r := apply(t, tr, &Record{Topic: "t", Sink: true, Offset: 99, Key: map[string]any{}, Value: "v"})
		if !data.ValueEqual(r.Key, map[string]any{"off": int64(99)}) || r.Value != "v" {
			t.Errorf("key = %v", r.Key)
		}
		_, err := tr.Apply(&Record{Topic: "t", Key: map[string]any{}})
		if err == nil || err.Error() != "Only SinkRecord supported for [field insertion], found: SourceRecord" {
			t.Errorf("offset on source: %v", err)
		}
	})
	t.Run("errors", func(t *testing.T) {
		tr := mustTransform(t, "InsertField$Value", props)
		_, err := tr.Apply(&Record{Topic: "t", Value: "not a map"})
		if err == nil || err.Error() != "Only Map objects supported in absence of schema for [field insertion], found: string" {
			t.Errorf("err = %v", err)
		}
		if err := (&InsertField{}).Configure(nil); err == nil || !strings.Contains(err.Error(), "No field insertion configured") {
			t.Errorf("empty config: %v", err)
		}
		if err := (&InsertField{}).Configure(map[string]string{"static.field": "x"}); err == nil ||
			err.Error() != "Invalid value null for configuration static.value: No value specified for static field: x" {
			t.Errorf("static without value: %v", err)
		}
	})
}

// Kafka's ReplaceFieldTest examples.
func TestReplaceField(t *testing.T) {
	in := map[string]any{"dont": "whatever", "abc": int32(42), "foo": true, "etc": "etc"}
	tests := []struct {
		name  string
		props map[string]string
		want  map[string]any
	}{
		{"include+renames", map[string]string{"include": "abc,foo", "renames": "abc:xyz,foo:bar"}, map[string]any{"xyz": int32(42), "bar": true}},
		{"exclude", map[string]string{"exclude": "dont", "renames": "abc:xyz,foo:bar"}, map[string]any{"xyz": int32(42), "bar": true, "etc": "etc"}},
		{"exclude wins", map[string]string{"include": "abc,dont", "exclude": "dont"}, map[string]any{"abc": int32(42)}},
		{"legacy blacklist", map[string]string{"blacklist": "dont,etc"}, map[string]any{"abc": int32(42), "foo": true}},
		{"legacy whitelist", map[string]string{"whitelist": "foo"}, map[string]any{"foo": true}},
		{"new key beats legacy", map[string]string{"include": "abc", "whitelist": "foo"}, map[string]any{"abc": int32(42)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := mustTransform(t, "ReplaceField$Value", tt.props)
			r := apply(t, tr, &Record{Value: in})
			if !data.ValueEqual(r.Value, tt.want) {
				t.Errorf("value = %v, want %v", r.Value, tt.want)
			}
		})
	}
	t.Run("with schema", func(t *testing.T) {
		s := data.Build(data.Struct).
			Field("dont", data.PrimitiveSchema(data.String)).
			Field("abc", data.PrimitiveSchema(data.Int32)).
			Field("foo", data.PrimitiveSchema(data.Boolean)).
			Field("etc", data.Build(data.String).Optional().Default("dflt").MustSchema()).
			MustSchema()
		v := data.NewStruct(s).MustPut("dont", "whatever").MustPut("abc", int32(42)).MustPut("foo", true)
		tr := mustTransform(t, "ReplaceField$Value", map[string]string{"exclude": "dont", "renames": "abc:xyz,foo:bar"})
		r := apply(t, tr, &Record{ValueSchema: s, Value: v})
		us := r.ValueSchema
		if len(us.Fields) != 3 || us.Fields[0].Name != "xyz" || us.Fields[1].Name != "bar" || us.Fields[2].Name != "etc" {
			t.Fatalf("fields = %+v", us.Fields)
		}
		st := r.Value.(*data.StructValue)
		if x, _ := st.Get("xyz"); x != int32(42) {
			t.Errorf("xyz = %v", x)
		}
		if e, _ := st.GetWithoutDefault("etc"); e != "dflt" {
			t.Errorf("etc = %v, want default copied in", e)
		}
		tr2 := mustTransform(t, "ReplaceField$Value", map[string]string{"replace.null.with.default": "false"})
		r2 := apply(t, tr2, &Record{ValueSchema: s, Value: v})
		if e, _ := r2.Value.(*data.StructValue).GetWithoutDefault("etc"); e != nil {
			t.Errorf("replace.null.with.default=false: etc = %v", e)
		}
	})
	t.Run("bad renames", func(t *testing.T) {
		err := (&ReplaceField{}).Configure(map[string]string{"renames": "a:b,c"})
		if err == nil || err.Error() != "Invalid value [a:b, c] for configuration renames: Invalid rename mapping: c" {
			t.Errorf("err = %v", err)
		}
	})
}

func TestMaskField(t *testing.T) {
	in := map[string]any{
		"int": int32(42), "long": int64(42), "bool": true, "str": "secret", "dec": data.NewDecimal(4200, 2),
		"date": time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), "list": []any{"a"}, "map": map[string]any{"k": "v"}, "keep": "x",
	}
	tr := mustTransform(t, "MaskField$Value", map[string]string{"fields": "int,long,bool,str,dec,date,list,map,absent"})
	r := apply(t, tr, &Record{Value: in})
	want := map[string]any{
		"int": int32(0), "long": int64(0), "bool": false, "str": "", "dec": data.NewDecimal(0, 2),
		"date": time.UnixMilli(0), "list": []any{}, "map": map[string]any{}, "keep": "x", "absent": nil,
	}
	if !data.ValueEqual(r.Value, want) {
		t.Errorf("masked = %v", r.Value)
	}
	if in["str"] != "secret" {
		t.Error("input modified")
	}

	tr = mustTransform(t, "MaskField$Value", map[string]string{"fields": "str,num", "replacement": "123"})
	r = apply(t, tr, &Record{Value: map[string]any{"str": "secret", "num": int32(7)}})
	if !data.ValueEqual(r.Value, map[string]any{"str": "123", "num": int32(123)}) {
		t.Errorf("replacement = %v", r.Value)
	}
	tr = mustTransform(t, "MaskField$Value", map[string]string{"fields": "num", "replacement": "<redacted>"})
	if _, err := tr.Apply(&Record{Value: map[string]any{"num": int32(7)}}); err == nil ||
		err.Error() != "Unable to convert <redacted> (string) to number" {
		t.Errorf("bad replacement: %v", err)
	}
	tr = mustTransform(t, "MaskField$Value", map[string]string{"fields": "b", "replacement": "x"})
	if _, err := tr.Apply(&Record{Value: map[string]any{"b": true}}); err == nil ||
		err.Error() != "Cannot mask value of type bool with custom replacement." {
		t.Errorf("bool replacement: %v", err)
	}

	s := data.Build(data.Struct).Field("magic", data.PrimitiveSchema(data.Int32)).Field("name", data.OptionalSchema(data.String)).MustSchema()
	v := data.NewStruct(s).MustPut("magic", int32(42)).MustPut("name", "n")
	tr = mustTransform(t, "MaskField$Key", map[string]string{"fields": "magic"})
	r = apply(t, tr, &Record{KeySchema: s, Key: v})
	if m, _ := r.Key.(*data.StructValue).Get("magic"); m != int32(0) || r.KeySchema != s {
		t.Errorf("struct mask = %v", r.Key)
	}
	if n, _ := r.Key.(*data.StructValue).Get("name"); n != "n" {
		t.Errorf("unmasked field = %v", n)
	}
	if err := (&MaskField{}).Configure(map[string]string{"fields": ""}); err == nil || err.Error() != "Invalid value [] for configuration fields: Empty list" {
		t.Errorf("empty fields: %v", err)
	}
}

func TestValueToKey(t *testing.T) {
	tr := mustTransform(t, "ValueToKey", map[string]string{"fields": "a,b"})
	r := apply(t, tr, &Record{Key: "old", Value: map[string]any{"a": int32(1), "b": int32(2), "c": int32(3)}})
	if !data.ValueEqual(r.Key, map[string]any{"a": int32(1), "b": int32(2)}) || r.KeySchema != nil {
		t.Errorf("key = %v", r.Key)
	}
	s := data.Build(data.Struct).Field("a", data.PrimitiveSchema(data.Int32)).Field("b", data.PrimitiveSchema(data.Int32)).
		Field("c", data.PrimitiveSchema(data.Int32)).MustSchema()
	v := data.NewStruct(s).MustPut("a", int32(1)).MustPut("b", int32(2)).MustPut("c", int32(3))
	r = apply(t, tr, &Record{Key: "old", ValueSchema: s, Value: v})
	ks := data.Build(data.Struct).Field("a", data.PrimitiveSchema(data.Int32)).Field("b", data.PrimitiveSchema(data.Int32)).MustSchema()
	if !r.KeySchema.Equal(ks) || !data.ValueEqual(r.Key, data.NewStruct(ks).MustPut("a", int32(1)).MustPut("b", int32(2))) {
		t.Errorf("key = %v %+v", r.Key, r.KeySchema)
	}
	tr = mustTransform(t, "ValueToKey", map[string]string{"fields": "nope"})
	if _, err := tr.Apply(&Record{ValueSchema: s, Value: v}); err == nil || err.Error() != "Field does not exist: nope" {
		t.Errorf("missing field: %v", err)
	}
}

func TestExtractField(t *testing.T) {
	tr := mustTransform(t, "ExtractField$Key", map[string]string{"field": "magic"})
	r := apply(t, tr, &Record{Key: map[string]any{"magic": int32(42)}})
	if r.Key != int32(42) {
		t.Errorf("key = %v", r.Key)
	}
	r = apply(t, tr, &Record{})
	if r.Key != nil {
		t.Error("null key changed")
	}
	s := data.Build(data.Struct).Field("magic", data.PrimitiveSchema(data.Int32)).MustSchema()
	r = apply(t, tr, &Record{KeySchema: s, Key: data.NewStruct(s).MustPut("magic", int32(42))})
	if r.Key != int32(42) || r.KeySchema.Type != data.Int32 {
		t.Errorf("struct key = %v %v", r.Key, r.KeySchema)
	}
	r = apply(t, tr, &Record{KeySchema: s})
	if r.Key != nil || r.KeySchema.Type != data.Int32 {
		t.Errorf("null struct = %v %v", r.Key, r.KeySchema)
	}
	tr = mustTransform(t, "ExtractField$Key", map[string]string{"field": "nope"})
	if _, err := tr.Apply(&Record{KeySchema: s, Key: data.NewStruct(s)}); err == nil || err.Error() != "Unknown field: nope" {
		t.Errorf("unknown field: %v", err)
	}

	// KIP-821 nested paths.
	inner := data.Build(data.Struct).Field("baz", data.PrimitiveSchema(data.String)).MustSchema()
	outer := data.Build(data.Struct).Field("foo.bar", inner).MustSchema()
	v := data.NewStruct(outer).MustPut("foo.bar", data.NewStruct(inner).MustPut("baz", "deep"))
	tr = mustTransform(t, "ExtractField$Value", map[string]string{"field": "`foo.bar`.baz", "field.syntax.version": "v2"})
	r = apply(t, tr, &Record{ValueSchema: outer, Value: v})
	if r.Value != "deep" || r.ValueSchema.Type != data.String {
		t.Errorf("nested = %v", r.Value)
	}
	r = apply(t, tr, &Record{Value: map[string]any{"foo.bar": map[string]any{"baz": "m"}}})
	if r.Value != "m" {
		t.Errorf("nested map = %v", r.Value)
	}
	for path, want := range map[string][]string{
		"a.b":            {"a", "b"},
		"`a.b`.c":        {"a.b", "c"},
		"`a.b`":          {"a.b"},
		"a.":             {"a", ""},
		"`a\\`.b`.c":     {"a`.b", "c"},
		"plain":          {"plain"},
		"`x`y`.z":        {"x`y", "z"},
		"one.`two.2`.th": {"one", "two.2", "th"},
	} {
		got, err := parseFieldPathV2(path)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("parseFieldPathV2(%q) = %q %v, want %q", path, got, err, want)
		}
	}
	if _, err := parseFieldPathV2("`abc"); err == nil {
		t.Error("unterminated backtick accepted")
	}
}

func TestRouters(t *testing.T) {
	tests := []struct {
		regex, replacement, topic, want string
	}{
		{"(.*)", "prefix-$1", "orig", "prefix-orig"},
		{"(.*)", "$1-suffix", "orig", "orig-suffix"},
		{"(.*)-(\\d)", "$1-$2-suffix", "orig-1", "orig-1-suffix"},
		{"(.*)-(\\d)", "$2", "orig-1", "1"},
		{"(.*)-(\\d)", "$1$2", "orig", "orig"}, // no full match: unchanged
		{"foo(.*)", "bar$1", "xfoo", "xfoo"},
		{"(?P<base>.*)\\.raw", "${base}.clean", "orders.raw", "orders.clean"},
		{"(a)", "$10", "a", "a0"},  // group 1, then a literal 0
		{"(a)", "\\$1", "a", "$1"}, // escaped dollar
	}
	for _, tt := range tests {
		tr := mustTransform(t, "RegexRouter", map[string]string{"regex": tt.regex, "replacement": tt.replacement})
		r := apply(t, tr, &Record{Topic: tt.topic})
		if r.Topic != tt.want {
			t.Errorf("RegexRouter(%s, %s)(%s) = %s, want %s", tt.regex, tt.replacement, tt.topic, r.Topic, tt.want)
		}
	}
	for _, bad := range []map[string]string{
		{"regex": "(", "replacement": "x"},
		{"regex": "(a)", "replacement": "$2"},
		{"regex": "(a)", "replacement": "${nope}"},
		{"regex": "(a)", "replacement": "x\\"},
	} {
		if err := (&RegexRouter{}).Configure(bad); err == nil {
			t.Errorf("RegexRouter%v accepted", bad)
		}
	}

	ts := time.UnixMilli(1483425001864) // 2017-01-03T06:30:01.864Z
	tr := mustTransform(t, "TimestampRouter", nil)
	r := apply(t, tr, &Record{Topic: "test", Timestamp: ts})
	if r.Topic != "test-20170103" {
		t.Errorf("default format = %s", r.Topic)
	}
	tr = mustTransform(t, "TimestampRouter", map[string]string{"topic.format": "foo-${topic}-${timestamp}", "timestamp.format": "YYYYMM"})
	if r := apply(t, tr, &Record{Topic: "t", Timestamp: ts}); r.Topic != "foo-t-201701" {
		t.Errorf("custom format = %s", r.Topic)
	}
	if _, err := tr.Apply(&Record{Topic: "t"}); err == nil || !strings.HasPrefix(err.Error(), "Timestamp missing on record: ") {
		t.Errorf("missing timestamp: %v", err)
	}
	err := (&TimestampRouter{}).Configure(map[string]string{"timestamp.format": "yyyy-qq"})
	if err == nil || !strings.HasPrefix(err.Error(), "Invalid value yyyy-qq for configuration timestamp.format: unsupported pattern letter 'q'") {
		t.Errorf("bad timestamp.format: %v", err)
	}
}

func TestPredicates(t *testing.T) {
	p, _ := LookupPredicate("TopicNameMatches")
	tn := p.New()
	if err := tn.Configure(map[string]string{"pattern": "my-prefix-.*"}); err != nil {
		t.Fatal(err)
	}
	if !tn.Test(&Record{Topic: "my-prefix-1"}) || tn.Test(&Record{Topic: "x-my-prefix-1"}) || tn.Test(&Record{}) {
		t.Error("TopicNameMatches")
	}
	if err := p.New().Configure(map[string]string{"pattern": ""}); err == nil ||
		err.Error() != "Invalid value  for configuration pattern: String must be non-empty" {
		t.Errorf("empty pattern: %v", err)
	}
	if err := p.New().Configure(nil); err == nil || err.Error() != `Missing required configuration "pattern" which has no default value.` {
		t.Errorf("no pattern: %v", err)
	}
	hk := &HasHeaderKey{}
	if err := hk.Configure(map[string]string{"name": "trace"}); err != nil {
		t.Fatal(err)
	}
	if !hk.Test(&Record{Headers: []sdk.Header{{Key: "a"}, {Key: "trace", Value: nil}}}) || hk.Test(&Record{Headers: []sdk.Header{{Key: "Trace"}}}) {
		t.Error("HasHeaderKey")
	}
	if !(RecordIsTombstone{}).Test(&Record{Key: "k"}) || (RecordIsTombstone{}).Test(&Record{Value: []byte{}}) {
		t.Error("RecordIsTombstone")
	}
}

// The predicate examples from Kafka's documentation.
func TestFromConfigDocsExamples(t *testing.T) {
	stages, err := FromConfig(map[string]string{
		"transforms":                   "Filter,Extract",
		"transforms.Filter.type":       "org.apache.kafka.connect.transforms.Filter",
		"transforms.Filter.predicate":  "IsFoo",
		"transforms.Extract.type":      "org.apache.kafka.connect.transforms.ExtractField$Key",
		"transforms.Extract.field":     "other_field",
		"transforms.Extract.predicate": "IsBar",
		"transforms.Extract.negate":    "true",
		"predicates":                   "IsFoo,IsBar",
		"predicates.IsFoo.type":        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
		"predicates.IsFoo.pattern":     "foo",
		"predicates.IsBar.type":        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
		"predicates.IsBar.pattern":     "bar",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) != 2 || stages[1].Class != pkg+"ExtractField$Key" || !stages[1].Negate || stages[0].PredicateAlias != "IsFoo" {
		t.Fatalf("stages = %+v", stages)
	}
	run := func(topic string) (*Record, bool) {
		r := &Record{Topic: topic, Key: map[string]any{"other_field": "x"}}
		for _, s := range stages {
			keep, err := s.Apply(r)
			if err != nil {
				t.Fatal(err)
			}
			if !keep {
				return r, false
			}
		}
		return r, true
	}
	if _, keep := run("foo"); keep {
		t.Error("record on foo not filtered")
	}
	if r, keep := run("bar"); !keep || !data.ValueEqual(r.Key, map[string]any{"other_field": "x"}) {
		t.Errorf("bar: extract should not apply (negated predicate): %v", r.Key)
	}
	if r, keep := run("baz"); !keep || r.Key != "x" {
		t.Errorf("baz: extract should apply: %v", r.Key)
	}
}

func TestFromConfigErrors(t *testing.T) {
	tests := []struct {
		props map[string]string
		key   string
		want  string
	}{
		{map[string]string{"transforms": "a"}, "transforms.a.type", `Missing required configuration "transforms.a.type" which has no default value.`},
		{map[string]string{"transforms": "a,a", "transforms.a.type": "Filter"}, "transforms", "Invalid value [a, a] for configuration transforms: Duplicate alias provided."},
		{map[string]string{"transforms": "a", "transforms.a.type": "Nope"}, "transforms.a.type", "Invalid value Nope for configuration transforms.a.type: Class Nope could not be found; known transformations: "},
		{map[string]string{"transforms": "a", "transforms.a.type": "RegexRouter", "transforms.a.regex": "x"}, "transforms.a.replacement",
			`Missing required configuration "transforms.a.replacement" which has no default value.`},
		{map[string]string{"transforms": "a", "transforms.a.type": "Cast$Value", "transforms.a.spec": "f:bytes"}, "transforms.a.spec",
			"Invalid value [f:bytes] for configuration transforms.a.spec: Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"},
		{map[string]string{"transforms": "a", "transforms.a.type": "Filter", "transforms.a.negate": "true"}, "transforms.a.negate",
			"Config 'transforms.a.negate' was provided but there is no config 'transforms.a.predicate' defining a predicate to be negated."},
		{map[string]string{"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p"}, "transforms.a.predicate",
			"Invalid value p for configuration transforms.a.predicate: Predicate alias p is not listed in predicates"},
		{map[string]string{"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p", "predicates": "p", "predicates.p.type": "TopicNameMatches"},
			"predicates.p.pattern", `Missing required configuration "predicates.p.pattern" which has no default value.`},
		{map[string]string{"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p", "predicates": "p", "predicates.p.type": "IsBlue"},
			"predicates.p.type", "Invalid value IsBlue for configuration predicates.p.type: Class IsBlue could not be found; known predicates: HasHeaderKey, RecordIsTombstone, TopicNameMatches"},
	}
	for _, tt := range tests {
		_, err := FromConfig(tt.props)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%v:\n got %v\nwant %s", tt.props, err, tt.want)
			continue
		}
		var ce *configdef.ConfigError
		var errs configdef.Errors
		switch {
		case errors.As(err, &errs):
			if errs[0].Key != tt.key {
				t.Errorf("%v: key %s, want %s", tt.props, errs[0].Key, tt.key)
			}
		case errors.As(err, &ce):
			if ce.Key != tt.key {
				t.Errorf("%v: key %s, want %s", tt.props, ce.Key, tt.key)
			}
		default:
			t.Errorf("%v: error %T does not name its key", tt.props, err)
		}
	}
	if stages, err := FromConfig(map[string]string{}); err != nil || len(stages) != 0 {
		t.Errorf("no transforms = %v %v", stages, err)
	}
}
