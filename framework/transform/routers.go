package transform

import (
	"regexp"
	"strings"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/internal/javafmt"
)

// RegexRouter rewrites the topic when the whole topic matches regex, using
// replacement with $1-style group references (Kafka's RegexRouter).
type RegexRouter struct {
	re       *regexp.Regexp
	template string
}

// Def implements Transformation.
func (t *RegexRouter) Def() *configdef.Def {
	return configdef.New().
		Define(configdef.Key{Name: "regex", Type: configdef.String, Required: true, Validator: configdef.Regex(),
			Importance: configdef.High, Documentation: "Regular expression to use for matching."}).
		Define(configdef.Key{Name: "replacement", Type: configdef.String, Required: true,
			Importance: configdef.High, Documentation: "Replacement string."})
}

// Configure implements Transformation.
func (t *RegexRouter) Configure(props map[string]string) error {
	v, err := t.Def().Parse(props)
	if err != nil {
		return err
	}
	if t.re, err = fullMatch(v.String("regex")); err != nil {
		return configdef.Invalid("regex", v.String("regex"), "Invalid regex: "+err.Error())
	}
	repl := v.String("replacement")
	if t.template, err = javaReplacement(repl, t.re); err != nil {
		return configdef.Invalid("replacement", repl, err.Error())
	}
	return nil
}

// Apply implements Transformation.
func (t *RegexRouter) Apply(r *Record) (bool, error) {
	m := t.re.FindStringSubmatchIndex(r.Topic)
	if m == nil {
		return true, nil
	}
	r.Topic = string(t.re.ExpandString(nil, t.template, r.Topic, m))
	return true, nil
}

// TimestampRouter sets the topic from topic.format, replacing ${topic} with
// the original topic and ${timestamp} with the record timestamp formatted
// by timestamp.format in UTC (Kafka's TimestampRouter).
type TimestampRouter struct {
	topicFormat string
	tsFormat    *javafmt.DateFormat
}

// Def implements Transformation.
func (t *TimestampRouter) Def() *configdef.Def {
	return configdef.New().
		Define(configdef.Key{Name: "topic.format", Type: configdef.String, Default: "${topic}-${timestamp}", Importance: configdef.High,
			Documentation: "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively."}).
		Define(configdef.Key{Name: "timestamp.format", Type: configdef.String, Default: "yyyyMMdd", Importance: configdef.High,
			Validator: configdef.Func("java.text.SimpleDateFormat pattern", func(key string, v any) error {
				if _, err := javafmt.CompileDateFormat(v.(string)); err != nil {
					return configdef.Invalid(key, v, err.Error())
				}
				return nil
			}),
			Documentation: "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."})
}

// Configure implements Transformation.
func (t *TimestampRouter) Configure(props map[string]string) error {
	v, err := t.Def().Parse(props)
	if err != nil {
		return err
	}
	t.topicFormat = v.String("topic.format")
	t.tsFormat, err = javafmt.CompileDateFormat(v.String("timestamp.format"))
	return err
}

// Apply implements Transformation.
func (t *TimestampRouter) Apply(r *Record) (bool, error) {
	if r.Timestamp.IsZero() {
		return false, dataErr("Timestamp missing on record: %s", r)
	}
	ts := t.tsFormat.Format(r.Timestamp.UTC())
	topic := strings.ReplaceAll(t.topicFormat, "${topic}", r.Topic)
	r.Topic = strings.ReplaceAll(topic, "${timestamp}", ts)
	return true, nil
}

// Filter drops every record it is applied to; combine it with a predicate
// (Kafka's Filter).
type Filter struct{}

// Def implements Transformation.
func (Filter) Def() *configdef.Def { return configdef.New() }

// Configure implements Transformation.
func (Filter) Configure(map[string]string) error { return nil }

// Apply implements Transformation.
func (Filter) Apply(*Record) (bool, error) { return false, nil }
