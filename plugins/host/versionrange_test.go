package host

import (
	"errors"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1.0", "1", 0},
		{"1.0.0", "1.0.0-final", 0},
		{"1.2", "1.10", -1},
		{"2.0.0", "1.99.99", 1},
		{"1.0-alpha", "1.0-beta", -1},
		{"1.0-rc1", "1.0", -1},
		{"1.0-SNAPSHOT", "1.0", -1},
		{"1.0-rc2", "1.0-snapshot", -1},
		{"1.0", "1.0-sp1", -1},
		{"1.0.1", "1.0-sp1", 1},
		{"0.1.0", "0.2.0", -1},
	} {
		if got := CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := CompareVersions(c.b, c.a); got != -c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

func TestVersionRange(t *testing.T) {
	for _, c := range []struct {
		spec    string
		in, out []string
	}{
		{"", []string{"0.0.1", "9"}, nil},
		{"latest", []string{"0.0.1", "9"}, nil},
		// A bare version is exactly that version (Kafka Connect's
		// PluginUtils.connectorVersionRequirement), not Maven's soft
		// "at least" recommendation.
		{"1.0", []string{"1.0", "1", "1.0.0"}, []string{"1.0.1", "0.9", "2.0"}},
		{" 1.0 ", []string{"1.0"}, []string{"1.1"}},
		{"[1.0]", []string{"1.0"}, []string{"1.1"}},
		{"[1.0,2.0)", []string{"1.0", "1.5", "1.99"}, []string{"0.9", "2.0", "2.1"}},
		{"(1.0,2.0]", []string{"1.1", "2.0"}, []string{"1.0", "2.1"}},
		{"[1.5,)", []string{"1.5", "100"}, []string{"1.4"}},
		{"(,1.0]", []string{"0.1", "1.0"}, []string{"1.0.1"}},
		{"(,1.0],[1.2,)", []string{"1.0", "1.2", "3"}, []string{"1.1"}},
	} {
		r, err := ParseVersionRange(c.spec)
		if err != nil {
			t.Errorf("ParseVersionRange(%q): %v", c.spec, err)
			continue
		}
		for _, v := range c.in {
			if !r.Contains(v) {
				t.Errorf("%q should contain %s", c.spec, v)
			}
		}
		for _, v := range c.out {
			if r.Contains(v) {
				t.Errorf("%q should not contain %s", c.spec, v)
			}
		}
	}
	for _, bad := range []string{"[1.0", "1.0]", "(1.0)", "[2.0,1.0]", "[1.0,2.0),", "[,1.0]", "[1.0,)x", "[1.0,2.0),[1.5,3.0)", "1.0,2.0", "[1,2,3]"} {
		if _, err := ParseVersionRange(bad); !errors.Is(err, ErrInvalidVersionRange) {
			t.Errorf("ParseVersionRange(%q) = %v, want ErrInvalidVersionRange", bad, err)
		}
	}
}
