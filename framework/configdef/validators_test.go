package configdef

import (
	"errors"
	"strings"
	"testing"
)

func TestValidators(t *testing.T) {
	tests := []struct {
		name    string
		v       Validator
		value   any
		wantErr string // "" = valid
		desc    string
	}{
		{"atLeast ok", AtLeast(1), int32(1), "", "[1,...]"},
		{"atLeast low", AtLeast(1), int32(0), "Invalid value 0 for configuration k: Value must be at least 1", "[1,...]"},
		{"atLeast long", AtLeast(int64(-1)), int64(-2), "Invalid value -2 for configuration k: Value must be at least -1", "[-1,...]"},
		{"atMost", AtMost(10), int32(11), "Invalid value 11 for configuration k: Value must be no more than 10", "[...,10]"},
		{"between ok", Between(1, 10), int16(10), "", "[1,...,10]"},
		{"between high", Between(1, 10), int64(11), "Invalid value 11 for configuration k: Value must be no more than 10", "[1,...,10]"},
		{"between double", Between(0.0, 1.0), 1.5, "Invalid value 1.5 for configuration k: Value must be no more than 1.0", "[0.0,...,1.0]"},
		{"range int64 precise", AtMost(int64(1) << 62), int64(1)<<62 + 1, "Invalid value 4611686018427387905 for configuration k: Value must be no more than 4611686018427387904", "[...,4611686018427387904]"},
		{"range not a number", AtLeast(0), "x", "Invalid value x for configuration k: Value must be a number", "[0,...]"},
		{"oneOf ok", OneOf("none", "all"), "all", "", "[none, all]"},
		{"oneOf case", OneOf("none", "all"), "ALL", "Invalid value ALL for configuration k: String must be one of: none, all", "[none, all]"},
		{"oneOfIgnoreCase", OneOfIgnoreCase("poll", "interval"), "Poll", "", "(case insensitive) [POLL, INTERVAL]"},
		{"oneOfIgnoreCase bad", OneOfIgnoreCase("poll"), "x", "Invalid value x for configuration k: String must be one of (case insensitive): POLL", "(case insensitive) [POLL]"},
		{"listOf ok", ListOf("a", "b"), []string{"a", "b", "a"}, "", "[a, b]"},
		{"listOf bad", ListOf("a", "b"), []string{"a", "c"}, "Invalid value c for configuration k: String must be one of: a, b", "[a, b]"},
		{"nonEmpty", NonEmptyString(), "", "Invalid value  for configuration k: String must be non-empty", "non-empty string"},
		{"nonEmpty ok", NonEmptyString(), "x", "", "non-empty string"},
		{"noControl empty", NonEmptyStringWithoutControlChars(), "", "Invalid value  for configuration k: String may not be empty", "non-empty string without ISO control characters"},
		{"noControl bad", NonEmptyStringWithoutControlChars(), "a\tb\x01", "Invalid value a\tb\x01 for configuration k: String may not contain control sequences but had the following ASCII chars: 9, 1", "non-empty string without ISO control characters"},
		{"noControl ok", NonEmptyStringWithoutControlChars(), "my-connector ü", "", "non-empty string without ISO control characters"},
		{"nonEmptyList", NonEmptyList(), []string{}, "Invalid value [] for configuration k: Empty list", "non-empty list"},
		{"uniqueList", UniqueList("transformation aliases"), []string{"a", "b", "a"}, "Invalid value [a, b, a] for configuration k: Duplicate alias provided.", "unique transformation aliases"},
		{"uniqueList ok", UniqueList("x"), []string{"a", "b"}, "", "unique x"},
		{"regex ok", Regex(), "topic-.*", "", "valid regex"},
		{"regex bad", Regex(), "a(", "Invalid value a( for configuration k: Invalid regex: error parsing regexp: missing closing ): `a(`", "valid regex"},
		{"matches ok", Matches(`[a-z]+`), "abc", "", "string matching [a-z]+"},
		{"matches partial", Matches(`[a-z]+`), "abc1", "Invalid value abc1 for configuration k: String must match the regular expression [a-z]+", "string matching [a-z]+"},
		{"all", All(NonEmptyString(), Regex()), "", "Invalid value  for configuration k: String must be non-empty", "non-empty string, valid regex"},
		{"all second", All(NonEmptyString(), Regex()), "(", "Invalid value ( for configuration k: Invalid regex: error parsing regexp: missing closing ): `(`", "non-empty string, valid regex"},
		{"func", Func("even numbers", func(k string, v any) error {
			if v.(int32)%2 != 0 {
				return Invalid(k, v, "Value must be even")
			}
			return nil
		}), int32(3), "Invalid value 3 for configuration k: Value must be even", "even numbers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.Validate("k", tt.value)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("error = %v\nwant    %s", err, tt.wantErr)
			}
			if err != nil {
				var ce *ConfigError
				if !errors.As(err, &ce) || ce.Key != "k" {
					t.Errorf("error is not a *ConfigError for k: %T", err)
				}
			}
			if got := tt.v.String(); got != tt.desc {
				t.Errorf("String() = %q, want %q", got, tt.desc)
			}
		})
	}
}

func TestMarkdown(t *testing.T) {
	d := New().
		Define(Key{Name: "free", Type: String, Documentation: "Ungrouped."}).
		Define(Key{Name: "name", Type: String, Required: true, Importance: High, Documentation: "Globally unique name.", Group: "Common", OrderInGroup: 1}).
		Define(Key{Name: "tasks.max", Type: Int, Default: 1, Validator: AtLeast(1), Importance: High,
			Documentation: "Maximum number\nof <tasks> | pipes, e.g. <code>a:b</code>.", Group: "Common", OrderInGroup: 2}).
		Define(Key{Name: "errors.tolerance", Type: String, Default: "none", Validator: OneOf("none", "all"), Group: "Error Handling", OrderInGroup: 1}).
		Define(Key{Name: "topics", Type: List, Default: "", Group: "Common", OrderInGroup: 3}).
		Define(Key{Name: "pw", Type: Password, Default: "x", Group: "Common", OrderInGroup: 4})
	want := "| Name | Type | Default | Valid values | Importance | Description |\n" +
		"|---|---|---|---|---|---|\n" +
		"| `free` | STRING | null |  | medium | Ungrouped. |\n" +
		"\n### Common\n\n" +
		"| Name | Type | Default | Valid values | Importance | Description |\n" +
		"|---|---|---|---|---|---|\n" +
		"| `name` | STRING | *required* |  | high | Globally unique name. |\n" +
		"| `tasks.max` | INT | `1` | [1,...] | high | Maximum number of &lt;tasks&gt; \\| pipes, e.g. `a:b`. |\n" +
		"| `topics` | LIST | \"\" |  | medium |  |\n" +
		"| `pw` | PASSWORD | `[hidden]` |  | medium |  |\n" +
		"\n### Error Handling\n\n" +
		"| Name | Type | Default | Valid values | Importance | Description |\n" +
		"|---|---|---|---|---|---|\n" +
		"| `errors.tolerance` | STRING | `none` | [none, all] | medium |  |\n"
	if got := d.Markdown(); got != want {
		t.Errorf("markdown =\n%s\nwant\n%s", got, want)
		for i, l := range strings.Split(got, "\n") {
			t.Logf("%d %q", i, l)
		}
	}
}
