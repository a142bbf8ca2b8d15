package convert

import (
	"slices"
	"testing"
)

func TestSet(t *testing.T) {
	extra := Info{Class: "com.example.X", Aliases: []string{"X", "Json"}, Record: true, New: func() Converter { return &StringConverter{} }}
	set := NewSet(extra)
	for _, tc := range []struct {
		set   *Set
		class string
		want  string // "" = not found
	}{
		{nil, "com.example.X", ""},
		{set, "com.example.X", "com.example.X"},
		{set, " X ", "com.example.X"},
		{set, JSONClass, JSONClass},
		// A built-in's alias keeps resolving to the built-in: full names
		// are matched before aliases.
		{set, "JsonConverter", JSONClass},
		{set, "Json", JSONClass},
	} {
		info, ok := tc.set.Lookup(tc.class)
		if got := map[bool]string{true: info.Class}[ok]; got != tc.want {
			t.Errorf("Lookup(%q) = %q, want %q", tc.class, got, tc.want)
		}
	}
	if !slices.Contains(set.KnownClasses(false), "com.example.X") || slices.Contains(set.KnownClasses(true), "com.example.X") {
		t.Errorf("KnownClasses: record %v header %v", set.KnownClasses(false), set.KnownClasses(true))
	}
	if slices.Contains(KnownClasses(false), "com.example.X") {
		t.Error("the package-level list includes an extra class")
	}
	if _, err := set.New("com.example.X", map[string]string{}, false); err != nil {
		t.Errorf("New: %v", err)
	}
	if _, err := New("com.example.X", map[string]string{}, false); err == nil {
		t.Error("New without the set knows the extra class")
	}
	replaced := NewSet(Info{Class: JSONClass, Summary: "replacement", Record: true})
	if info, _ := replaced.Lookup(JSONClass); info.Summary != "replacement" || len(replaced.Infos()) != len(Builtins()) {
		t.Errorf("a class of a built-in's name does not replace it: %+v, %d infos", info, len(replaced.Infos()))
	}
}
