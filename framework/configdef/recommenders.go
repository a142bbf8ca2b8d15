package configdef

// Recommend returns a Recommender that always offers the same values and
// keeps the key visible.
func Recommend(values ...any) Recommender {
	return RecommenderFuncs{Values: func(string, map[string]any) []any { return values }}
}

// VisibleWhen returns a Recommender that shows the key only while the parsed
// value of other equals one of values (for example, show
// transaction.boundary.interval.ms only when transaction.boundary is
// interval). Strings compare case-insensitively.
func VisibleWhen(other string, values ...any) Recommender {
	return RecommenderFuncs{IsVisible: func(_ string, parsed map[string]any) bool {
		got := parsed[other]
		for _, v := range values {
			if equalLoose(got, v) {
				return true
			}
		}
		return false
	}}
}

func equalLoose(a, b any) bool {
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok {
		return len(as) == len(bs) && (as == bs || equalFoldASCII(as, bs))
	}
	return a == b
}

func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// RecommenderFuncs builds a Recommender from functions; a nil Values
// recommends nothing and a nil IsVisible means always visible.
type RecommenderFuncs struct {
	Values    func(key string, parsed map[string]any) []any
	IsVisible func(key string, parsed map[string]any) bool
}

// ValidValues implements Recommender.
func (r RecommenderFuncs) ValidValues(key string, parsed map[string]any) []any {
	if r.Values == nil {
		return nil
	}
	return r.Values(key, parsed)
}

// Visible implements Recommender.
func (r RecommenderFuncs) Visible(key string, parsed map[string]any) bool {
	if r.IsVisible == nil {
		return true
	}
	return r.IsVisible(key, parsed)
}
