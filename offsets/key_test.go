package offsets

import (
	"errors"
	"testing"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: `{"b":1,"a":"x"}`, want: `{"a":"x","b":1}`},
		{in: ` { "pos" : 12345678901234567890 } `, want: `{"pos":12345678901234567890}`},
		{in: `{"f":1.50,"t":true,"n":null}`, want: `{"f":1.50,"n":null,"t":true}`},
		{in: `{"html":"<a&b>"}`, want: `{"html":"<a&b>"}`},
		{in: `{}`, want: `{}`},
		{in: `{"nested":{"a":1}}`, bad: true},
		{in: `{"list":[1]}`, bad: true},
		{in: `[1,2]`, bad: true},
		{in: `"x"`, bad: true},
		{in: `{"a":1} {"b":2}`, bad: true},
		{in: `{"a":`, bad: true},
		{in: ``, bad: true},
		{in: `{"seq":1e400}`, bad: true},
		{in: `{"seq":-1e400}`, bad: true},
		{in: `{"tiny":1e-400}`, want: `{"tiny":1e-400}`},
	}
	for _, tt := range tests {
		got, err := Canonical([]byte(tt.in))
		if tt.bad {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("Canonical(%q) = %q, %v; want ErrFormat", tt.in, got, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	key, err := Key(`file-"source"`, []byte(`{"filename":"test.txt","b":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `["file-\"source\"",{"b":2,"filename":"test.txt"}]`; string(key) != want {
		t.Fatalf("Key = %s, want %s", key, want)
	}
	conn, part, err := ParseKey(key)
	if err != nil || conn != `file-"source"` || string(part) != `{"b":2,"filename":"test.txt"}` {
		t.Fatalf("ParseKey = %q, %s, %v", conn, part, err)
	}
	// Kafka Connect (Java) writes keys with its own field order; parsing
	// canonicalises them so they compare equal to ours.
	_, part, err = ParseKey([]byte(`["c", {"filename": "test.txt", "b": 2}]`))
	if err != nil || string(part) != `{"b":2,"filename":"test.txt"}` {
		t.Fatalf("ParseKey(java order) = %s, %v", part, err)
	}
}

func TestParseKeyRejects(t *testing.T) {
	for _, k := range []string{`["c"]`, `["c",{},"x"]`, `[1,{}]`, `["c",[1]]`, `{"c":{}}`, `not json`, `["c",{"a":{"b":1}}]`} {
		if _, _, err := ParseKey([]byte(k)); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseKey(%s) err = %v, want ErrFormat", k, err)
		}
	}
	if _, err := Key("", []byte(`{}`)); !errors.Is(err, ErrFormat) {
		t.Errorf("Key with empty connector: %v", err)
	}
}
