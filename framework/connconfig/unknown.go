package connconfig

import (
	"slices"
	"strings"

	"github.com/connectd/connectd/framework/configdef"
)

// UnknownKey is a connector config key no definition knows, with the
// defined key it is most likely a typo of ("" when none is close).
type UnknownKey struct {
	Key        string
	DidYouMean string
}

// Message is the warning for the key in connector name.
func (u UnknownKey) Message(name string) string {
	msg := "unknown connector property " + u.Key + " in connector " + name
	if u.DidYouMean == "" {
		return msg
	}
	return msg + "; did you mean " + u.DidYouMean + "?"
}

// openFamilies are connector config prefixes whose keys are not all
// declared: client overrides go to librdkafka, topic.creation.* has
// user-named groups, and a converter's settings are known only for the
// built-in converters.
var openFamilies = []string{
	"producer.override.", "consumer.override.", "admin.override.",
	KeyKeyConverter + ".", KeyValueConverter + ".", KeyHeaderConverter + ".",
	"topic.creation.",
}

// suggestedFamilies are the open families a misspelt prefix is corrected
// to.
var suggestedFamilies = []string{"producer.override.", "consumer.override.", "admin.override.", "topic.creation."}

// UnknownKeys returns the keys of props that the validation answer res
// (Validate's: the common keys, the transforms' and predicates' keys, the
// converters' and the connector's own keys) does not define and that no
// open family covers, each with the nearest defined key. The keys of a
// transform or predicate whose class is unknown are not reported (its
// type is the error). Kafka Connect accepts such keys, and connectors may
// read keys they do not declare, so callers warn and never refuse.
func UnknownKeys(props map[string]string, res configdef.ValidationResult) []UnknownKey {
	known := make([]string, 0, len(res.Configs))
	for _, c := range res.Configs {
		known = append(known, c.Value.Name)
	}
	slices.Sort(known)
	isKnown := func(k string) bool {
		_, ok := slices.BinarySearch(known, k)
		return ok
	}
	// An alias whose class is unknown has only its type key defined.
	typed := map[string]bool{}
	for _, kind := range []string{KeyTransforms, KeyPredicates} {
		for _, alias := range uniqueAliases(props, kind) {
			prefix := kind + "." + alias + "."
			for _, k := range known {
				if strings.HasPrefix(k, prefix) && k != prefix+"type" && k != prefix+"predicate" && k != prefix+"negate" {
					typed[prefix] = true
					break
				}
			}
		}
	}
	var out []UnknownKey
	for k := range props {
		if isKnown(k) || openFamily(k, typed, props) {
			continue
		}
		u := UnknownKey{Key: k}
		u.DidYouMean, _ = configdef.Nearest(k, known, suggestedFamilies...)
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b UnknownKey) int { return strings.Compare(a.Key, b.Key) })
	return out
}

func openFamily(k string, typed map[string]bool, props map[string]string) bool {
	for _, p := range openFamilies {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	for _, kind := range []string{KeyTransforms, KeyPredicates} {
		rest, ok := strings.CutPrefix(k, kind+".")
		if !ok {
			continue
		}
		alias, _, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		prefix := kind + "." + alias + "."
		// Settings of an alias that is not listed, or whose class is
		// unknown, have no definitions to compare with.
		if !slices.Contains(uniqueAliases(props, kind), alias) || !typed[prefix] {
			return true
		}
	}
	return false
}
