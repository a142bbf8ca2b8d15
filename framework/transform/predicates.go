package transform

import (
	"regexp"

	"github.com/connectd/connectd/framework/configdef"
)

// TopicNameMatches is true for records whose whole topic name matches
// pattern (Kafka's TopicNameMatches).
type TopicNameMatches struct{ re *regexp.Regexp }

// Def implements Predicate.
func (p *TopicNameMatches) Def() *configdef.Def {
	return configdef.New().Define(configdef.Key{Name: "pattern", Type: configdef.String, Required: true,
		Validator: configdef.All(configdef.NonEmptyString(), configdef.Regex()), Importance: configdef.Medium,
		Documentation: "A Java regular expression for matching against the name of a record's topic."})
}

// Configure implements Predicate.
func (p *TopicNameMatches) Configure(props map[string]string) error {
	v, err := p.Def().Parse(props)
	if err != nil {
		return err
	}
	if p.re, err = fullMatch(v.String("pattern")); err != nil {
		return configdef.Invalid("pattern", v.String("pattern"), "entry must be a Java-compatible regular expression: "+err.Error())
	}
	return nil
}

// Test implements Predicate.
func (p *TopicNameMatches) Test(r *Record) bool { return r.Topic != "" && p.re.MatchString(r.Topic) }

// HasHeaderKey is true for records with at least one header called name
// (Kafka's HasHeaderKey).
type HasHeaderKey struct{ name string }

// Def implements Predicate.
func (p *HasHeaderKey) Def() *configdef.Def {
	return configdef.New().Define(configdef.Key{Name: "name", Type: configdef.String, Required: true,
		Validator: configdef.NonEmptyString(), Importance: configdef.Medium, Documentation: "The header name."})
}

// Configure implements Predicate.
func (p *HasHeaderKey) Configure(props map[string]string) error {
	v, err := p.Def().Parse(props)
	if err != nil {
		return err
	}
	p.name = v.String("name")
	return nil
}

// Test implements Predicate.
func (p *HasHeaderKey) Test(r *Record) bool {
	for _, h := range r.Headers {
		if h.Key == p.name {
			return true
		}
	}
	return false
}

// RecordIsTombstone is true for records with a null value (Kafka's
// RecordIsTombstone).
type RecordIsTombstone struct{}

// Def implements Predicate.
func (RecordIsTombstone) Def() *configdef.Def { return configdef.New() }

// Configure implements Predicate.
func (RecordIsTombstone) Configure(map[string]string) error { return nil }

// Test implements Predicate.
func (RecordIsTombstone) Test(r *Record) bool { return r.Value == nil }
