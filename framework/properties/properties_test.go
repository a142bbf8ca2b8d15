package properties

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"equals", "a=b\n", map[string]string{"a": "b"}},
		{"colon and spaces", "a : b c \n", map[string]string{"a": "b c "}},
		{"whitespace separator", "key value\n", map[string]string{"key": "value"}},
		{"comments and blanks", "# c\n! c\n\n  x=1\n", map[string]string{"x": "1"}},
		{"empty value", "a=\nb\n", map[string]string{"a": "", "b": ""}},
		{"continuation", "list=a,\\\n    b,\\\n    c\n", map[string]string{"list": "a,b,c"}},
		{"escaped backslash is no continuation", "p=c:\\\\\n", map[string]string{"p": `c:\`}},
		{"escapes", `k\ ey=v\tw\u0041\e` + "\n", map[string]string{"k ey": "v\twAe"}},
		{"later wins", "a=1\na=2\n", map[string]string{"a": "2"}},
		{"value with equals", "jaas=a=b;c\n", map[string]string{"jaas": "a=b;c"}},
		{"no trailing newline", "a=1", map[string]string{"a": "1"}},
		{"placeholder kept", "p=${file:/x.properties:pw}\n", map[string]string{"p": "${file:/x.properties:pw}"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseRejectsMalformedUnicodeEscape(t *testing.T) {
	if _, err := Parse(strings.NewReader("a=\\u12\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("err = %v, want a line-numbered error", err)
	}
}

func TestWriteRoundTrips(t *testing.T) {
	in := map[string]string{
		"plain":      "v",
		"key with=:": "value",
		"multi":      "line1\nline2\tx\\",
		"lead":       " space",
		"#hash":      "!bang",
	}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	got, err := Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("round trip: got %q, want %q\nfile:\n%s", got, in, buf.String())
	}
}
