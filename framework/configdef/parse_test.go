package configdef

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestParseValue(t *testing.T) {
	tests := []struct {
		typ     Type
		raw     string
		want    any
		wantErr string
	}{
		{Boolean, "true", true, ""},
		{Boolean, " FALSE ", false, ""},
		{Boolean, "True", true, ""},
		{Boolean, "yes", nil, "Invalid value yes for configuration k: Expected value to be either true or false"},
		{Boolean, "", nil, "Invalid value  for configuration k: Expected value to be either true or false"},
		{String, "  padded  ", "padded", ""},
		{Class, " org.example.X ", "org.example.X", ""},
		{Int, "42", int32(42), ""},
		{Int, " -7 ", int32(-7), ""},
		{Int, "+3", int32(3), ""},
		{Int, "2147483647", int32(math.MaxInt32), ""},
		{Int, "2147483648", nil, "Invalid value 2147483648 for configuration k: Not a number of type INT"},
		{Int, "1.5", nil, "Invalid value 1.5 for configuration k: Not a number of type INT"},
		{Int, "abc", nil, "Invalid value abc for configuration k: Not a number of type INT"},
		{Short, "32767", int16(32767), ""},
		{Short, "32768", nil, "Invalid value 32768 for configuration k: Not a number of type SHORT"},
		{Long, "9223372036854775807", int64(math.MaxInt64), ""},
		{Long, "-1", int64(-1), ""},
		{Long, "9223372036854775808", nil, "Invalid value 9223372036854775808 for configuration k: Not a number of type LONG"},
		{Double, "1.5", 1.5, ""},
		{Double, "1e3", 1000.0, ""},
		{Double, "2d", 2.0, ""},
		{Double, "-Infinity", math.Inf(-1), ""},
		{Double, "x", nil, "Invalid value x for configuration k: Not a number of type DOUBLE"},
		{Double, "1_000", nil, "Invalid value 1_000 for configuration k: Not a number of type DOUBLE"},
		{List, "a, b ,c", []string{"a", "b", "c"}, ""},
		{List, "  ", []string{}, ""},
		{List, "a,,b", []string{"a", "", "b"}, ""},
		{List, "a,", []string{"a", ""}, ""},
		{List, "single", []string{"single"}, ""},
		{Password, " s3cret ", NewSecret("s3cret"), ""},
	}
	for _, tt := range tests {
		got, err := ParseValue("k", tt.typ, tt.raw)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseValue(%s, %q) error = %v, want %q", tt.typ, tt.raw, err, tt.wantErr)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Key != "k" {
				t.Errorf("ParseValue(%s, %q) error %T does not carry the key", tt.typ, tt.raw, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseValue(%s, %q): %v", tt.typ, tt.raw, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseValue(%s, %q) = %#v, want %#v", tt.typ, tt.raw, got, tt.want)
		}
	}
}

func TestDefineNormalizesDefaults(t *testing.T) {
	d := New().
		Define(Key{Name: "i", Type: Int, Default: 5}).
		Define(Key{Name: "is", Type: Int, Default: "7"}).
		Define(Key{Name: "s", Type: Short, Default: 3}).
		Define(Key{Name: "l", Type: Long, Default: int32(9)}).
		Define(Key{Name: "d", Type: Double, Default: 2}).
		Define(Key{Name: "b", Type: Boolean, Default: "TRUE"}).
		Define(Key{Name: "list", Type: List, Default: "x, y"}).
		Define(Key{Name: "list2", Type: List, Default: []string{}}).
		Define(Key{Name: "pw", Type: Password, Default: "dflt"}).
		Define(Key{Name: "req", Type: String, Required: true, Default: "ignored"})
	want := map[string]any{
		"i": int32(5), "is": int32(7), "s": int16(3), "l": int64(9), "d": 2.0, "b": true,
		"list": []string{"x", "y"}, "list2": []string{}, "pw": NewSecret("dflt"), "req": nil,
	}
	for name, w := range want {
		k, _ := d.Key(name)
		if !reflect.DeepEqual(k.Default, w) {
			t.Errorf("default of %s = %#v, want %#v", name, k.Default, w)
		}
	}
	k, _ := d.Key("i")
	if k.DisplayName != "i" || k.Width != WidthNone || k.Importance != Medium {
		t.Errorf("Define did not fill display name/width/importance: %+v", k)
	}
}

func TestDefinePanics(t *testing.T) {
	tests := map[string]func(){
		"no name":        func() { New().Define(Key{Type: String}) },
		"no type":        func() { New().Define(Key{Name: "a"}) },
		"unknown type":   func() { New().Define(Key{Name: "a", Type: "FLOAT"}) },
		"twice":          func() { New().Define(Key{Name: "a", Type: String}).Define(Key{Name: "a", Type: Int}) },
		"bad default":    func() { New().Define(Key{Name: "a", Type: Int, Default: "x"}) },
		"wrong type":     func() { New().Define(Key{Name: "a", Type: Boolean, Default: 1}) },
		"out of range":   func() { New().Define(Key{Name: "a", Type: Short, Default: 70000}) },
		"fails validtor": func() { New().Define(Key{Name: "a", Type: Int, Default: 0, Validator: AtLeast(1)}) },
	}
	for name, fn := range tests {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("Define did not panic")
				}
			}()
			fn()
		})
	}
}

func testDef() *Def {
	return New().
		Define(Key{Name: "name", Type: String, Required: true, Validator: NonEmptyStringWithoutControlChars()}).
		Define(Key{Name: "tasks.max", Type: Int, Default: 1, Validator: AtLeast(1)}).
		Define(Key{Name: "mode", Type: String, Default: "a", Validator: OneOf("a", "b")}).
		Define(Key{Name: "topics", Type: List, Default: ""}).
		Define(Key{Name: "optional", Type: String}).
		Define(Key{Name: "pw", Type: Password}).
		Define(Key{Name: "ratio", Type: Double, Default: 0.5}).
		Define(Key{Name: "flag", Type: Boolean, Default: false}).
		Define(Key{Name: "big", Type: Long, Default: -1}).
		Define(Key{Name: "small", Type: Short, Default: 3})
}

func TestParse(t *testing.T) {
	v, err := testDef().Parse(map[string]string{
		"name": "c1", "tasks.max": "4", "topics": "a,b", "pw": "hunter2", "flag": "TRUE", "unknown.key": "fine",
	})
	if err != nil {
		t.Fatal(err)
	}
	if v.String("name") != "c1" || v.Int("tasks.max") != 4 || v.String("mode") != "a" ||
		!reflect.DeepEqual(v.List("topics"), []string{"a", "b"}) || v.Secret("pw").Value() != "hunter2" ||
		v.Double("ratio") != 0.5 || !v.Bool("flag") || v.Long("big") != -1 || v.Short("small") != 3 {
		t.Errorf("unexpected values: %v", v.Map())
	}
	if !v.IsSet("tasks.max") || v.IsSet("mode") {
		t.Error("IsSet wrong")
	}
	if !v.IsNull("optional") || v.String("optional") != "" {
		t.Error("null default should read as null / empty string")
	}
	for name, fn := range map[string]func(){
		"undefined":  func() { v.Get("nope") },
		"wrong type": func() { v.Int("name") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: accessor did not panic", name)
				}
			}()
			fn()
		}()
	}
}

func TestParseReportsEveryError(t *testing.T) {
	_, err := testDef().Parse(map[string]string{"tasks.max": "0", "mode": "c", "flag": "maybe"})
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %T is not Errors", err)
	}
	want := []string{
		`Missing required configuration "name" which has no default value.`,
		"Invalid value 0 for configuration tasks.max: Value must be at least 1",
		"Invalid value c for configuration mode: String must be one of: a, b",
		"Invalid value maybe for configuration flag: Expected value to be either true or false",
	}
	var got []string
	for _, e := range errs {
		got = append(got, e.Message)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(errs.For("mode")) != 1 || errs.For("mode")[0].Key != "mode" {
		t.Error("Errors.For(mode) wrong")
	}
	if !strings.Contains(err.Error(), "tasks.max") || !strings.Contains(err.Error(), "; ") {
		t.Errorf("joined message %q", err.Error())
	}
}

func TestParseUndefinedDependent(t *testing.T) {
	d := New().Define(Key{Name: "a", Type: String, Default: "", Dependents: []string{"ghost"}})
	_, err := d.Parse(nil)
	if err == nil || err.Error() != "ghost is referred in the dependents, but not defined." {
		t.Fatalf("err = %v", err)
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    any
		t    Type
		want *string
	}{
		{nil, String, nil},
		{[]string{"a", "b"}, List, ptr("a,b")},
		{[]string{}, List, ptr("")},
		{NewSecret("x"), Password, ptr("[hidden]")},
		{1.0, Double, ptr("1.0")},
		{int32(3), Int, ptr("3")},
		{int16(-3), Short, ptr("-3")},
		{int64(1) << 40, Long, ptr("1099511627776")},
		{true, Boolean, ptr("true")},
		{"s", String, ptr("s")},
	}
	for _, tt := range tests {
		got := FormatValue(tt.v, tt.t)
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("FormatValue(%#v) = %v, want %v", tt.v, deref(got), deref(tt.want))
		}
	}
}

func ptr(s string) *string { return &s }

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
