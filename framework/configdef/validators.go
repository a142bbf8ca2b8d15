package configdef

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/connectd/connectd/framework/internal/javafmt"
)

// Number is the set of Go types that numeric keys parse into.
type Number interface {
	~int | ~int16 | ~int32 | ~int64 | ~float64
}

// Range checks that a numeric value lies within bounds (Kafka's
// ConfigDef.Range). Build it with AtLeast, AtMost or Between.
type Range struct {
	min, max *bound
}

type bound struct {
	text     string // as shown in messages and docs
	f        float64
	i        int64
	integral bool
}

func newBound(v any) *bound {
	f, i, integral := numberOf(v)
	return &bound{text: numberString(v), f: f, i: i, integral: integral}
}

// AtLeast accepts values >= min.
func AtLeast[T Number](min T) Range { return Range{min: newBound(min)} }

// AtMost accepts values <= max.
func AtMost[T Number](max T) Range { return Range{max: newBound(max)} }

// Between accepts min <= value <= max.
func Between[T Number](min, max T) Range { return Range{min: newBound(min), max: newBound(max)} }

func numberOf(v any) (float64, int64, bool) {
	switch n := v.(type) {
	case float64:
		return n, int64(n), false
	case float32:
		return float64(n), int64(n), false
	}
	if i, ok := toInt64(v); ok {
		return float64(i), i, true
	}
	// Named numeric types (T ~int): fall back through fmt.
	s := fmt.Sprint(v)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return float64(i), i, true
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f, int64(f), false
}

func numberString(v any) string {
	if f, ok := v.(float64); ok {
		return javafmt.FormatDouble(f)
	}
	return fmt.Sprint(v)
}

// cmp compares a value with b: -1, 0 or 1.
func (b *bound) cmp(f float64, i int64, integral bool) int {
	if integral && b.integral {
		switch {
		case i < b.i:
			return -1
		case i > b.i:
			return 1
		}
		return 0
	}
	switch {
	case f < b.f:
		return -1
	case f > b.f:
		return 1
	}
	return 0
}

// Validate implements Validator.
func (r Range) Validate(key string, value any) error {
	switch value.(type) {
	case nil, string, bool, []string:
		return Invalid(key, value, "Value must be a number")
	}
	f, i, integral := numberOf(value)
	if r.min != nil && r.min.cmp(f, i, integral) < 0 {
		return Invalid(key, value, "Value must be at least "+r.min.text)
	}
	if r.max != nil && r.max.cmp(f, i, integral) > 0 {
		return Invalid(key, value, "Value must be no more than "+r.max.text)
	}
	return nil
}

// String renders the range as Kafka does: "[1,...]", "[...,10]", "[1,...,10]".
func (r Range) String() string {
	switch {
	case r.min != nil && r.max != nil:
		return "[" + r.min.text + ",...," + r.max.text + "]"
	case r.min != nil:
		return "[" + r.min.text + ",...]"
	case r.max != nil:
		return "[...," + r.max.text + "]"
	}
	return "[...]"
}

type oneOf struct {
	valid      []string
	ignoreCase bool
}

// OneOf accepts exactly the given strings (Kafka's ValidString.in).
func OneOf(valid ...string) Validator { return oneOf{valid: valid} }

// OneOfIgnoreCase accepts the given strings in any letter case (Kafka's
// CaseInsensitiveValidString.in). Messages show them upper-cased, as Kafka
// does.
func OneOfIgnoreCase(valid ...string) Validator {
	up := make([]string, len(valid))
	for i, v := range valid {
		up[i] = strings.ToUpper(v)
	}
	return oneOf{valid: up, ignoreCase: true}
}

func (o oneOf) Validate(key string, value any) error {
	s, _ := value.(string)
	for _, v := range o.valid {
		if v == s || (o.ignoreCase && strings.EqualFold(v, s)) {
			return nil
		}
	}
	if o.ignoreCase {
		return Invalid(key, value, "String must be one of (case insensitive): "+strings.Join(o.valid, ", "))
	}
	return Invalid(key, value, "String must be one of: "+strings.Join(o.valid, ", "))
}

func (o oneOf) String() string {
	s := "[" + strings.Join(o.valid, ", ") + "]"
	if o.ignoreCase {
		return "(case insensitive) " + s
	}
	return s
}

type listOf struct{ elem oneOf }

// ListOf accepts a LIST whose every element is one of valid (Kafka's
// ValidList.in).
func ListOf(valid ...string) Validator { return listOf{elem: oneOf{valid: valid}} }

func (l listOf) Validate(key string, value any) error {
	list, _ := value.([]string)
	for _, s := range list {
		if err := l.elem.Validate(key, s); err != nil {
			return err
		}
	}
	return nil
}

func (l listOf) String() string { return l.elem.String() }

type nonEmptyString struct{}

// NonEmptyString rejects "" (Kafka's NonEmptyString).
func NonEmptyString() Validator { return nonEmptyString{} }

func (nonEmptyString) Validate(key string, value any) error {
	if s, _ := value.(string); s == "" {
		return Invalid(key, value, "String must be non-empty")
	}
	return nil
}

func (nonEmptyString) String() string { return "non-empty string" }

type nonEmptyNoControl struct{}

// NonEmptyStringWithoutControlChars rejects "" and strings holding ISO
// control characters (Kafka's validator for connector names).
func NonEmptyStringWithoutControlChars() Validator { return nonEmptyNoControl{} }

func (nonEmptyNoControl) Validate(key string, value any) error {
	s, _ := value.(string)
	if s == "" {
		return Invalid(key, value, "String may not be empty")
	}
	var bad []string
	for _, r := range s {
		if unicode.IsControl(r) {
			bad = append(bad, strconv.Itoa(int(r)))
		}
	}
	if len(bad) > 0 {
		return Invalid(key, value, "String may not contain control sequences but had the following ASCII chars: "+strings.Join(bad, ", "))
	}
	return nil
}

func (nonEmptyNoControl) String() string { return "non-empty string without ISO control characters" }

type nonEmptyList struct{}

// NonEmptyList rejects an empty LIST.
func NonEmptyList() Validator { return nonEmptyList{} }

func (nonEmptyList) Validate(key string, value any) error {
	if l, _ := value.([]string); len(l) == 0 {
		return Invalid(key, value, "Empty list")
	}
	return nil
}

func (nonEmptyList) String() string { return "non-empty list" }

type uniqueList struct{ what string }

// UniqueList rejects a LIST with a repeated element; what names the
// elements for docs ("transformation aliases").
func UniqueList(what string) Validator { return uniqueList{what: what} }

func (u uniqueList) Validate(key string, value any) error {
	l, _ := value.([]string)
	seen := make(map[string]bool, len(l))
	for _, s := range l {
		if seen[s] {
			return Invalid(key, value, "Duplicate alias provided.")
		}
		seen[s] = true
	}
	return nil
}

func (u uniqueList) String() string { return "unique " + u.what }

type validRegex struct{}

// Regex accepts a string that compiles as a regular expression (Go RE2
// syntax, which covers Java's except backreferences and lookaround).
func Regex() Validator { return validRegex{} }

func (validRegex) Validate(key string, value any) error {
	s, _ := value.(string)
	if _, err := regexp.Compile(s); err != nil {
		return Invalid(key, value, "Invalid regex: "+err.Error())
	}
	return nil
}

func (validRegex) String() string { return "valid regex" }

type matches struct {
	re   *regexp.Regexp
	expr string
}

// Matches accepts strings that match expr entirely. expr must compile.
func Matches(expr string) Validator {
	return matches{re: regexp.MustCompile(`^(?:` + expr + `)$`), expr: expr}
}

func (m matches) Validate(key string, value any) error {
	s, _ := value.(string)
	if !m.re.MatchString(s) {
		return Invalid(key, value, "String must match the regular expression "+m.expr)
	}
	return nil
}

func (m matches) String() string { return "string matching " + m.expr }

type topicName struct{ optional bool }

// TopicName accepts a legal Kafka topic name: 1 to 249 characters of ASCII
// letters, digits, '.', '_' and '-', not "." or "..". With optional, ""
// (no topic) is accepted too. A name the broker would refuse is refused
// with the config, not when a task first touches the topic.
func TopicName(optional bool) Validator { return topicName{optional: optional} }

func (v topicName) Validate(key string, value any) error {
	s, _ := value.(string)
	switch {
	case s == "" && v.optional:
		return nil
	case s == "":
		return Invalid(key, value, "String must be non-empty")
	case len(s) > 249:
		return Invalid(key, value, fmt.Sprintf("Topic name is %d characters long, Kafka allows at most 249", len(s)))
	case s == "." || s == "..":
		return Invalid(key, value, "Topic name cannot be \".\" or \"..\"")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return Invalid(key, value, "Topic name is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'")
		}
	}
	return nil
}

func (v topicName) String() string {
	if v.optional {
		return "empty, or a legal topic name"
	}
	return "a legal topic name"
}

type all []Validator

// All runs every validator in order and reports the first failure (Kafka's
// CompositeValidator).
func All(vs ...Validator) Validator { return all(vs) }

func (a all) Validate(key string, value any) error {
	for _, v := range a {
		if err := v.Validate(key, value); err != nil {
			return err
		}
	}
	return nil
}

func (a all) String() string {
	parts := make([]string, len(a))
	for i, v := range a {
		parts[i] = v.String()
	}
	return strings.Join(parts, ", ")
}

type funcValidator struct {
	desc string
	fn   func(key string, value any) error
}

// Func builds a validator from a function and a description of the valid
// values (Kafka's LambdaValidator). fn should return Invalid(...) so that
// the message names the key.
func Func(desc string, fn func(key string, value any) error) Validator {
	return funcValidator{desc: desc, fn: fn}
}

func (f funcValidator) Validate(key string, value any) error { return f.fn(key, value) }
func (f funcValidator) String() string                       { return f.desc }
