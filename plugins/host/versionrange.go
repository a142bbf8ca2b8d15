package host

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"unicode"
)

// Plugin versions (KIP-891) are compared and selected as Kafka Connect
// does, which uses Maven's ComparableVersion and VersionRange: a version
// is a list of numeric and textual items ("1.10.0-rc1" is 1, 10, 0, "rc",
// 1; trailing zeros do not count, so 1.0 equals 1), and a requirement is
// either empty or "latest" (the highest installed version), a range in
// Maven's syntax ("[1.0,2.0)", "(,1.5]", "[1.2,)", several joined by
// commas: "(,1.0],[1.2,)"), or a bare version, which Kafka Connect
// (PluginUtils.connectorVersionRequirement) turns into the exact range
// "[v]".

// ErrInvalidVersionRange is a plugin.version value that is not a version
// nor a Maven version range.
var ErrInvalidVersionRange = errors.New("invalid version range")

// VersionRange is a parsed *.plugin.version requirement. The zero value
// accepts every version (no requirement).
type VersionRange struct {
	spec         string
	restrictions []restriction
}

type restriction struct {
	lower, upper       *comparableVersion // nil: unbounded
	lowerIncl, upperIn bool
}

// ParseVersionRange parses a *.plugin.version value as Kafka Connect does.
func ParseVersionRange(spec string) (VersionRange, error) {
	s := strings.TrimSpace(spec)
	if s == "" || s == "latest" {
		return VersionRange{}, nil
	}
	if !strings.ContainsAny(s, "[(") {
		if strings.ContainsAny(s, "])") || strings.Contains(s, ",") {
			return VersionRange{}, fmt.Errorf("%w %q", ErrInvalidVersionRange, spec)
		}
		v := parseComparable(s)
		return VersionRange{spec: "[" + s + "]", restrictions: []restriction{{lower: v, upper: v, lowerIncl: true, upperIn: true}}}, nil
	}
	var rs []restriction
	rest := s
	for rest != "" {
		if rest[0] != '[' && rest[0] != '(' {
			return VersionRange{}, fmt.Errorf("%w %q: expected [ or ( at %q", ErrInvalidVersionRange, spec, rest)
		}
		end := strings.IndexAny(rest, "])")
		if end < 0 {
			return VersionRange{}, fmt.Errorf("%w %q: unbounded range", ErrInvalidVersionRange, spec)
		}
		r, err := parseRestriction(rest[:end+1])
		if err != nil {
			return VersionRange{}, fmt.Errorf("%w %q: %v", ErrInvalidVersionRange, spec, err)
		}
		if n := len(rs); n > 0 && rs[n-1].upper != nil && r.lower != nil && r.lower.compare(rs[n-1].upper) < 0 {
			return VersionRange{}, fmt.Errorf("%w %q: ranges overlap", ErrInvalidVersionRange, spec)
		}
		rs = append(rs, r)
		rest = strings.TrimSpace(rest[end+1:])
		if strings.HasPrefix(rest, ",") {
			rest = strings.TrimSpace(rest[1:])
			if rest == "" {
				return VersionRange{}, fmt.Errorf("%w %q: trailing comma", ErrInvalidVersionRange, spec)
			}
		} else if rest != "" {
			return VersionRange{}, fmt.Errorf("%w %q: expected , between ranges", ErrInvalidVersionRange, spec)
		}
	}
	return VersionRange{spec: s, restrictions: rs}, nil
}

func parseRestriction(s string) (restriction, error) {
	r := restriction{lowerIncl: s[0] == '[', upperIn: s[len(s)-1] == ']'}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	lo, hi, two := strings.Cut(inner, ",")
	if strings.Contains(hi, ",") {
		return r, errors.New("more than two versions in one range")
	}
	if !two {
		// "[1.0]" is exactly 1.0; "(1.0)" and "[1.0)" mean nothing.
		if !r.lowerIncl || !r.upperIn || inner == "" {
			return r, fmt.Errorf("single version %q must be in []", s)
		}
		v := parseComparable(inner)
		r.lower, r.upper = v, v
		return r, nil
	}
	lo, hi = strings.TrimSpace(lo), strings.TrimSpace(hi)
	if lo != "" {
		r.lower = parseComparable(lo)
	}
	if hi != "" {
		r.upper = parseComparable(hi)
	}
	if (lo == "" && r.lowerIncl) || (hi == "" && r.upperIn) {
		return r, fmt.Errorf("an unbounded end of %q must be open", s)
	}
	if r.lower != nil && r.upper != nil {
		c := r.lower.compare(r.upper)
		if c > 0 || (c == 0 && (!r.lowerIncl || !r.upperIn)) {
			return r, fmt.Errorf("%q is empty", s)
		}
	}
	return r, nil
}

// Any reports whether the range accepts every version (no requirement:
// the highest installed one is chosen).
func (r VersionRange) Any() bool { return len(r.restrictions) == 0 }

// String is the range in Maven's syntax ("" when there is none).
func (r VersionRange) String() string { return r.spec }

// Contains reports whether version satisfies the range.
func (r VersionRange) Contains(version string) bool {
	if r.Any() {
		return true
	}
	v := parseComparable(version)
	for _, x := range r.restrictions {
		if x.lower != nil {
			c := v.compare(x.lower)
			if c < 0 || (c == 0 && !x.lowerIncl) {
				continue
			}
		}
		if x.upper != nil {
			c := v.compare(x.upper)
			if c > 0 || (c == 0 && !x.upperIn) {
				continue
			}
		}
		return true
	}
	return false
}

// CompareVersions orders two plugin versions as Maven's ComparableVersion
// does: -1, 0 or 1.
func CompareVersions(a, b string) int { return parseComparable(a).compare(parseComparable(b)) }

// comparableVersion is a simplified Maven ComparableVersion: a flat list
// of items, each numeric or a qualifier. Maven's nested lists (a "-"
// starts a sub-list) matter only for exotic mixes; a flat list orders the
// versions plugins publish (1.2.3, 1.2.3-rc1, 1.2.3-SNAPSHOT, 2.0.0.Final)
// the same way.
type comparableVersion struct {
	items []versionItem
}

type versionItem struct {
	num   *big.Int // numeric item, else nil
	qual  string   // qualifier, lower case
	isNum bool
}

// Qualifier order of Maven: alpha < beta < milestone < rc < snapshot <
// release ("", ga, final, release) < sp; unknown qualifiers come after sp,
// in lexical order.
var qualifierRank = map[string]int{
	"alpha": 0, "a": 0, "beta": 1, "b": 1, "milestone": 2, "m": 2,
	"rc": 3, "cr": 3, "snapshot": 4, "": 5, "ga": 5, "final": 5, "release": 5, "sp": 6,
}

func parseComparable(s string) *comparableVersion {
	s = strings.ToLower(strings.TrimSpace(s))
	var items []versionItem
	var cur strings.Builder
	digits := false
	flush := func() {
		t := cur.String()
		cur.Reset()
		if digits {
			n, _ := new(big.Int).SetString(t, 10)
			items = append(items, versionItem{num: n, isNum: true})
			return
		}
		items = append(items, versionItem{qual: t})
	}
	for _, ch := range s {
		switch {
		case ch == '.' || ch == '-' || ch == '_' || ch == '+':
			if cur.Len() == 0 {
				items = append(items, versionItem{num: new(big.Int), isNum: true})
			} else {
				flush()
			}
			digits = false
		case unicode.IsDigit(ch):
			if cur.Len() > 0 && !digits {
				flush()
			}
			if cur.Len() == 0 {
				digits = true
			}
			cur.WriteRune(ch)
		default:
			if cur.Len() > 0 && digits {
				flush()
				digits = false
			}
			cur.WriteRune(ch)
		}
	}
	if cur.Len() > 0 {
		flush()
	}
	// Trailing zeros and release qualifiers do not count: 1.0 == 1 ==
	// 1.0.0-final.
	for len(items) > 0 && items[len(items)-1].isNull() {
		items = items[:len(items)-1]
	}
	return &comparableVersion{items: items}
}

func (it versionItem) isNull() bool {
	if it.isNum {
		return it.num.Sign() == 0
	}
	r, ok := qualifierRank[it.qual]
	return ok && r == 5
}

// compare orders two items; a missing item is compared as null (0 or the
// release qualifier).
func compareItems(a, b *versionItem) int {
	// A missing item is 0 against a number and the release qualifier
	// against a qualifier, as in Maven (1.0-sp1 > 1.0 > 1.0-rc1).
	if a == nil && b == nil {
		return 0
	}
	if a == nil {
		null := versionItem{num: new(big.Int), isNum: true}
		if !b.isNum {
			null = versionItem{}
		}
		a = &null
	}
	if b == nil {
		null := versionItem{num: new(big.Int), isNum: true}
		if !a.isNum {
			null = versionItem{}
		}
		b = &null
	}
	switch {
	case a.isNum && b.isNum:
		return a.num.Cmp(b.num)
	case a.isNum:
		if b.isNull() {
			return a.num.Sign()
		}
		return 1 // a number is newer than a qualifier
	case b.isNum:
		if a.isNull() {
			return -b.num.Sign()
		}
		return -1
	}
	ra, oka := qualifierRank[a.qual]
	rb, okb := qualifierRank[b.qual]
	switch {
	case oka && okb:
		return cmpInt(ra, rb)
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a.qual, b.qual)
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (v *comparableVersion) compare(o *comparableVersion) int {
	n := max(len(v.items), len(o.items))
	for i := range n {
		var a, b *versionItem
		if i < len(v.items) {
			a = &v.items[i]
		}
		if i < len(o.items) {
			b = &o.items[i]
		}
		if c := compareItems(a, b); c != 0 {
			return c
		}
	}
	return 0
}
