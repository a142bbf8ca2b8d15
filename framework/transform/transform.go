package transform

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/data"
	"github.com/connectd/connectd/framework/sdk"
)

// Record is the view of a source or sink record that transforms work on
// (Kafka's ConnectRecord). Transforms replace fields of the Record; they
// never modify the maps or structs it points to, which may be shared.
type Record struct {
	Topic string
	// Partition is the Kafka partition, or sdk.AnyPartition when none is
	// set (Kafka's null kafkaPartition).
	Partition int32
	// Offset is the Kafka offset; meaningful only when Sink is true.
	Offset int64
	// Sink is true for records consumed from Kafka (Kafka's SinkRecord).
	Sink        bool
	KeySchema   *data.Schema
	Key         any
	ValueSchema *data.Schema
	Value       any
	// Timestamp is the record timestamp; zero means none.
	Timestamp time.Time
	Headers   []sdk.Header
}

func (r *Record) String() string {
	return fmt.Sprintf("Record{topic=%s, partition=%d, key=%s, value=%s, timestamp=%s}",
		r.Topic, r.Partition, data.ValueString(r.Key), data.ValueString(r.Value), tsString(r.Timestamp))
}

func tsString(t time.Time) string {
	if t.IsZero() {
		return "null"
	}
	return fmt.Sprint(t.UnixMilli())
}

// Transformation rewrites one record at a time (Kafka's Transformation).
type Transformation interface {
	// Def is the transformation's own configuration definition.
	Def() *configdef.Def
	// Configure applies its settings (the keys after "transforms.<alias>.").
	Configure(props map[string]string) error
	// Apply rewrites rec in place. keep=false drops the record (Filter).
	Apply(rec *Record) (keep bool, err error)
}

// Predicate decides whether a transformation applies to a record (Kafka's
// Predicate).
type Predicate interface {
	// Def is the predicate's own configuration definition.
	Def() *configdef.Def
	// Configure applies its settings (the keys after "predicates.<alias>.").
	Configure(props map[string]string) error
	// Test reports whether rec matches.
	Test(rec *Record) bool
}

// TransformationInfo describes a transformation class.
type TransformationInfo struct {
	Class   string   // Kafka's class name, e.g. org.apache.kafka.connect.transforms.InsertField$Value
	Aliases []string // short names, e.g. InsertField$Value
	Summary string
	New     func() Transformation
}

// PredicateInfo describes a predicate class.
type PredicateInfo struct {
	Class   string
	Aliases []string
	Summary string
	New     func() Predicate
}

const (
	pkg     = "org.apache.kafka.connect.transforms."
	predPkg = "org.apache.kafka.connect.transforms.predicates."
)

func keyValue(name, summary string, newFn func(op operand) Transformation) []TransformationInfo {
	return []TransformationInfo{
		{Class: pkg + name + "$Key", Aliases: []string{name + "$Key"}, Summary: summary + " (record key)",
			New: func() Transformation { return newFn(opKey) }},
		{Class: pkg + name + "$Value", Aliases: []string{name + "$Value"}, Summary: summary + " (record value)",
			New: func() Transformation { return newFn(opValue) }},
	}
}

// Transformations lists the built-in transformation classes.
func Transformations() []TransformationInfo {
	var out []TransformationInfo
	out = append(out, keyValue("InsertField", "Insert fields from record metadata or a static value",
		func(op operand) Transformation { return &InsertField{op: op} })...)
	out = append(out, keyValue("ReplaceField", "Filter or rename fields",
		func(op operand) Transformation { return &ReplaceField{op: op} })...)
	out = append(out, keyValue("MaskField", "Mask fields with a null value of their type or a replacement",
		func(op operand) Transformation { return &MaskField{op: op} })...)
	out = append(out, TransformationInfo{Class: pkg + "ValueToKey", Aliases: []string{"ValueToKey"},
		Summary: "Replace the record key with fields of the value", New: func() Transformation { return &ValueToKey{} }})
	out = append(out, keyValue("ExtractField", "Replace the key or value with one of its fields",
		func(op operand) Transformation { return &ExtractField{op: op} })...)
	out = append(out, keyValue("Cast", "Cast fields or the whole key or value to another primitive type",
		func(op operand) Transformation { return &Cast{op: op} })...)
	out = append(out,
		TransformationInfo{Class: pkg + "RegexRouter", Aliases: []string{"RegexRouter"},
			Summary: "Rewrite the topic with a regular expression", New: func() Transformation { return &RegexRouter{} }},
		TransformationInfo{Class: pkg + "TimestampRouter", Aliases: []string{"TimestampRouter"},
			Summary: "Rewrite the topic from the original topic and the record timestamp", New: func() Transformation { return &TimestampRouter{} }},
		TransformationInfo{Class: pkg + "Filter", Aliases: []string{"Filter"},
			Summary: "Drop records (use with a predicate)", New: func() Transformation { return Filter{} }},
	)
	return out
}

// Predicates lists the built-in predicate classes.
func Predicates() []PredicateInfo {
	return []PredicateInfo{
		{Class: predPkg + "TopicNameMatches", Aliases: []string{"TopicNameMatches"},
			Summary: "True for records whose topic matches a regular expression", New: func() Predicate { return &TopicNameMatches{} }},
		{Class: predPkg + "HasHeaderKey", Aliases: []string{"HasHeaderKey"},
			Summary: "True for records with at least one header with the given name", New: func() Predicate { return &HasHeaderKey{} }},
		{Class: predPkg + "RecordIsTombstone", Aliases: []string{"RecordIsTombstone"},
			Summary: "True for tombstones (null value)", New: func() Predicate { return RecordIsTombstone{} }},
	}
}

// LookupTransformation finds a transformation class by name or alias.
func LookupTransformation(class string) (TransformationInfo, bool) {
	class = strings.TrimSpace(class)
	for _, t := range Transformations() {
		if t.Class == class || contains(t.Aliases, class) {
			return t, true
		}
	}
	return TransformationInfo{}, false
}

// LookupPredicate finds a predicate class by name or alias.
func LookupPredicate(class string) (PredicateInfo, bool) {
	class = strings.TrimSpace(class)
	for _, p := range Predicates() {
		if p.Class == class || contains(p.Aliases, class) {
			return p, true
		}
	}
	return PredicateInfo{}, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ErrUnknownClass is returned for a class that is not a known
// transformation or predicate.
var ErrUnknownClass = errors.New("unknown class")

// TransformationAliases lists every accepted short name, sorted, for messages.
func TransformationAliases() []string {
	var out []string
	for _, t := range Transformations() {
		out = append(out, t.Aliases...)
	}
	sort.Strings(out)
	return out
}

// PredicateAliases lists every accepted short predicate name, sorted.
func PredicateAliases() []string {
	var out []string
	for _, p := range Predicates() {
		out = append(out, p.Aliases...)
	}
	sort.Strings(out)
	return out
}

// Stage is one configured transformation with its optional predicate
// (Kafka's TransformationStage).
type Stage struct {
	Alias          string
	Class          string
	Transformation Transformation
	PredicateAlias string
	PredicateClass string
	Predicate      Predicate // nil: always applies
	Negate         bool
}

// Apply runs the transformation if the predicate (negated when Negate)
// matches, or if there is no predicate.
func (s *Stage) Apply(rec *Record) (keep bool, err error) {
	if s.Predicate != nil && s.Predicate.Test(rec) == s.Negate {
		return true, nil
	}
	return s.Transformation.Apply(rec)
}

// Keys of the transform and predicate wiring.
const (
	TransformsConfig = "transforms"
	PredicatesConfig = "predicates"
	TypeConfig       = "type"
	PredicateConfig  = "predicate"
	NegateConfig     = "negate"
)

// FromConfig builds the stages listed in props' "transforms" key, in order,
// each configured from its "transforms.<alias>." keys and joined with the
// predicate named by "transforms.<alias>.predicate" (configured from
// "predicates.<name>."). Errors name the offending key.
func FromConfig(props map[string]string) ([]*Stage, error) {
	aliasesV, err := configdef.ParseValue(TransformsConfig, configdef.List, props[TransformsConfig])
	if err != nil {
		return nil, err
	}
	aliases := aliasesV.([]string)
	declaredPreds, _ := configdef.ParseValue(PredicatesConfig, configdef.List, props[PredicatesConfig])
	seen := map[string]bool{}
	var stages []*Stage
	for _, alias := range aliases {
		if alias == "" {
			continue
		}
		if seen[alias] {
			return nil, configdef.Invalid(TransformsConfig, aliases, "Duplicate alias provided.")
		}
		seen[alias] = true
		prefix := TransformsConfig + "." + alias + "."
		class, ok := props[prefix+TypeConfig]
		if !ok {
			return nil, configdef.Missing(prefix + TypeConfig)
		}
		info, ok := LookupTransformation(class)
		if !ok {
			return nil, configdef.Invalid(prefix+TypeConfig, class, "Class "+class+" could not be found; known transformations: "+strings.Join(TransformationAliases(), ", "))
		}
		sub := subProps(props, prefix)
		predAlias, hasPred := sub[PredicateConfig]
		negateRaw, hasNegate := sub[NegateConfig]
		delete(sub, PredicateConfig)
		delete(sub, NegateConfig)
		delete(sub, TypeConfig)
		t := info.New()
		if err := t.Configure(sub); err != nil {
			return nil, prefixError(prefix, err)
		}
		st := &Stage{Alias: alias, Class: info.Class, Transformation: t}
		if hasNegate && !hasPred {
			return nil, &configdef.ConfigError{Key: prefix + NegateConfig, Message: "Config '" + prefix + NegateConfig +
				"' was provided but there is no config '" + prefix + PredicateConfig + "' defining a predicate to be negated."}
		}
		if hasPred {
			predAlias = strings.TrimSpace(predAlias)
			if !contains(declaredPreds.([]string), predAlias) {
				return nil, configdef.Invalid(prefix+PredicateConfig, predAlias, "Predicate alias "+predAlias+" is not listed in "+PredicatesConfig)
			}
			pprefix := PredicatesConfig + "." + predAlias + "."
			pclass, ok := props[pprefix+TypeConfig]
			if !ok {
				return nil, configdef.Missing(pprefix + TypeConfig)
			}
			pinfo, ok := LookupPredicate(pclass)
			if !ok {
				return nil, configdef.Invalid(pprefix+TypeConfig, pclass, "Class "+pclass+" could not be found; known predicates: "+strings.Join(PredicateAliases(), ", "))
			}
			psub := subProps(props, pprefix)
			delete(psub, TypeConfig)
			p := pinfo.New()
			if err := p.Configure(psub); err != nil {
				return nil, prefixError(pprefix, err)
			}
			st.PredicateAlias, st.PredicateClass, st.Predicate = predAlias, pinfo.Class, p
			if hasNegate {
				n, err := configdef.ParseValue(prefix+NegateConfig, configdef.Boolean, negateRaw)
				if err != nil {
					return nil, err
				}
				st.Negate = n.(bool)
			}
		}
		stages = append(stages, st)
	}
	return stages, nil
}

func subProps(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if strings.HasPrefix(k, prefix) {
			out[k[len(prefix):]] = v
		}
	}
	return out
}

// prefixError rewrites configuration errors of a sub-config so that the
// key they name is the full key the user wrote.
func prefixError(prefix string, err error) error { return configdef.Prefix(err, prefix) }
