package chain

import (
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/configdef"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/sdk"
	"github.com/connectd/connectd/framework/transform"
)

// Raw is a record as bytes, as Kafka has it.
type Raw struct {
	Topic     string
	Partition int32 // sdk.AnyPartition allowed on the source side
	Offset    int64 // sink side only
	Key       []byte
	Value     []byte // nil = null (tombstone)
	Headers   []sdk.Header
	Timestamp time.Time // zero = none
}

// Defaults are the worker-level converter settings (key.converter,
// value.converter, header.converter and their sub-keys) used when the
// connector config lacks them.
type Defaults map[string]string

// ByteArrayDefaults returns worker defaults that pass keys and values
// through as bytes (ByteArrayConverter for both) — what tests and tools that
// have no worker config usually want. There is deliberately no implicit
// default: as in Kafka Connect, a missing converter is a configuration error.
func ByteArrayDefaults() Defaults {
	return Defaults{KeyConverter: convert.ByteArrayClass, ValueConverter: convert.ByteArrayClass}
}

// For returns the defaults that apply to a connector of spec: the worker's,
// except that a RawBytes connector's keys and values default to
// ByteArrayConverter, whatever the worker's key.converter and
// value.converter say (the connector's own config still wins, as
// ResolveConverter gives it precedence over defaults).
func (d Defaults) For(spec sdk.Spec) Defaults {
	if !spec.RawBytes || spec.Type != sdk.Source {
		return d
	}
	out := Defaults{}
	for k, v := range d {
		if k == HeaderConverter || strings.HasPrefix(k, HeaderConverter+".") {
			out[k] = v
		}
	}
	out[KeyConverter] = convert.ByteArrayClass
	out[ValueConverter] = convert.ByteArrayClass
	return out
}

// Keys of the converter settings.
const (
	KeyConverter    = "key.converter"
	ValueConverter  = "value.converter"
	HeaderConverter = "header.converter"
)

// Failure describes a per-record failure inside the chain.
type Failure struct {
	Stage sdk.Stage
	Class string // the executing class: a converter or transformation class name
	Err   error
}

func (f *Failure) Error() string {
	return fmt.Sprintf("%s failed in %s: %v", f.Stage, f.Class, f.Err)
}

func (f *Failure) Unwrap() error { return f.Err }

// converters is the resolved converter setup shared by both directions.
type converters struct {
	key, value           convert.Converter
	keyClass, valueClass string
	headerClass          string
	stages               []*transform.Stage
}

// Converter is a resolved converter setting: the class and its own
// settings, and whether it came from the connector or the worker.
type Converter struct {
	Class    string
	Props    map[string]string
	FromConn bool
}

// ResolveConverter picks the converter for role (KeyConverter,
// ValueConverter or HeaderConverter) the way Kafka Connect's Worker does.
// ok=false when neither config names one (for header.converter the
// answer is then SimpleHeaderConverter, ok=true).
func ResolveConverter(role string, props map[string]string, defaults Defaults) (Converter, bool) {
	if c, ok := props[role]; ok && strings.TrimSpace(c) != "" {
		return Converter{Class: strings.TrimSpace(c), Props: subProps(props, role+"."), FromConn: true}, true
	}
	if c, ok := defaults[role]; ok && strings.TrimSpace(c) != "" {
		return Converter{Class: strings.TrimSpace(c), Props: subProps(defaults, role+".")}, true
	}
	if role == HeaderConverter {
		return Converter{Class: convert.SimpleHeaderClass, Props: map[string]string{}}, true
	}
	return Converter{}, false
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

func build(set *convert.Set, props map[string]string, defaults Defaults) (*converters, error) {
	c := &converters{}
	for _, role := range []string{KeyConverter, ValueConverter} {
		rc, ok := ResolveConverter(role, props, defaults)
		if !ok {
			return nil, &configdef.ConfigError{Key: role, Message: fmt.Sprintf(
				"no %s configured: set %s in the connector config or the worker config to one of %s",
				role, role, strings.Join(set.KnownClasses(false), ", "))}
		}
		info, ok := set.Lookup(rc.Class)
		if !ok || !info.Record {
			return nil, configdef.Invalid(role, rc.Class, "Class "+rc.Class+" could not be found; known converters: "+
				strings.Join(set.KnownClasses(false), ", "))
		}
		conv := info.New()
		if err := conv.Configure(rc.Props, role == KeyConverter); err != nil {
			return nil, configdef.Prefix(err, role+".")
		}
		if role == KeyConverter {
			c.key, c.keyClass = conv, info.Class
		} else {
			c.value, c.valueClass = conv, info.Class
		}
	}
	hc, _ := ResolveConverter(HeaderConverter, props, defaults)
	info, ok := set.Lookup(hc.Class)
	if !ok || !info.Header {
		return nil, configdef.Invalid(HeaderConverter, hc.Class, "Class "+hc.Class+" could not be found; known header converters: "+
			strings.Join(set.KnownClasses(true), ", "))
	}
	c.headerClass = info.Class
	stages, err := transform.FromConfig(props)
	if err != nil {
		return nil, err
	}
	c.stages = stages
	return c, nil
}

// Source applies a source connector's transforms and converters.
type Source struct{ c *converters }

// NewSource builds the chain from a full connector/task config. Errors are
// configdef errors that name the offending key.
func NewSource(props map[string]string, defaults Defaults) (*Source, error) {
	return NewSourceWith(nil, props, defaults)
}

// NewSourceWith is NewSource with the converter classes of set (nil: the
// built-ins).
func NewSourceWith(set *convert.Set, props map[string]string, defaults Defaults) (*Source, error) {
	c, err := build(set, props, defaults)
	if err != nil {
		return nil, err
	}
	return &Source{c: c}, nil
}

// Apply runs the transforms, then the key and value converters, on rec
// (which it does not modify). keep=false: a transform filtered the record
// out. A non-nil fail means the record could not be processed.
func (s *Source) Apply(rec *sdk.SourceRecord) (out Raw, keep bool, fail *Failure) {
	topic, partition := rec.Topic, rec.Partition
	keySchema, key, valueSchema, value := rec.KeySchema, rec.Key, rec.ValueSchema, rec.Value
	headers, ts := rec.Headers, rec.Timestamp
	if len(s.c.stages) > 0 {
		r := transform.Record{
			Topic: topic, Partition: partition,
			KeySchema: keySchema, Key: key, ValueSchema: valueSchema, Value: value,
			Timestamp: ts, Headers: headers,
		}
		for _, st := range s.c.stages {
			keep, err := st.Apply(&r)
			if err != nil {
				return Raw{}, false, &Failure{Stage: sdk.StageTransformation, Class: st.Class, Err: err}
			}
			if !keep {
				return Raw{}, false, nil
			}
		}
		topic, partition = r.Topic, r.Partition
		keySchema, key, valueSchema, value = r.KeySchema, r.Key, r.ValueSchema, r.Value
		headers, ts = r.Headers, r.Timestamp
	}
	kb, err := s.c.key.FromConnect(topic, keySchema, key)
	if err != nil {
		return Raw{}, false, &Failure{Stage: sdk.StageKeyConverter, Class: s.c.keyClass, Err: err}
	}
	vb, err := s.c.value.FromConnect(topic, valueSchema, value)
	if err != nil {
		return Raw{}, false, &Failure{Stage: sdk.StageValueConverter, Class: s.c.valueClass, Err: err}
	}
	return Raw{Topic: topic, Partition: partition, Key: kb, Value: vb, Headers: headers, Timestamp: ts}, true, nil
}

// Sink applies a sink connector's converters and transforms.
type Sink struct{ c *converters }

// NewSink builds the chain from a full connector/task config. Errors are
// configdef errors that name the offending key.
func NewSink(props map[string]string, defaults Defaults) (*Sink, error) {
	return NewSinkWith(nil, props, defaults)
}

// NewSinkWith is NewSink with the converter classes of set (nil: the
// built-ins).
func NewSinkWith(set *convert.Set, props map[string]string, defaults Defaults) (*Sink, error) {
	c, err := build(set, props, defaults)
	if err != nil {
		return nil, err
	}
	return &Sink{c: c}, nil
}

// Apply runs the key and value converters, then the transforms.
// keep=false: a transform filtered the record out (its offset still counts
// as processed).
func (s *Sink) Apply(in Raw) (rec *sdk.SinkRecord, keep bool, fail *Failure) {
	rec = new(sdk.SinkRecord)
	keep, fail = s.ApplyTo(in, rec)
	return rec, keep, fail
}

// ApplyTo is Apply writing into a caller-owned record, so that a batch can
// reuse one []sdk.SinkRecord.
func (s *Sink) ApplyTo(in Raw, rec *sdk.SinkRecord) (keep bool, fail *Failure) {
	ks, k, err := s.c.key.ToConnect(in.Topic, in.Key)
	if err != nil {
		return false, &Failure{Stage: sdk.StageKeyConverter, Class: s.c.keyClass, Err: err}
	}
	vs, v, err := s.c.value.ToConnect(in.Topic, in.Value)
	if err != nil {
		return false, &Failure{Stage: sdk.StageValueConverter, Class: s.c.valueClass, Err: err}
	}
	*rec = sdk.SinkRecord{
		Topic: in.Topic, Partition: in.Partition, Offset: in.Offset,
		KeySchema: ks, Key: k, ValueSchema: vs, Value: v,
		Headers: in.Headers, Timestamp: in.Timestamp,
		OriginalTopic: in.Topic, OriginalPartition: in.Partition, OriginalOffset: in.Offset,
	}
	if len(s.c.stages) == 0 {
		return true, nil
	}
	r := transform.Record{
		Topic: in.Topic, Partition: in.Partition, Offset: in.Offset, Sink: true,
		KeySchema: ks, Key: k, ValueSchema: vs, Value: v,
		Timestamp: in.Timestamp, Headers: in.Headers,
	}
	for _, st := range s.c.stages {
		keep, err := st.Apply(&r)
		if err != nil {
			return false, &Failure{Stage: sdk.StageTransformation, Class: st.Class, Err: err}
		}
		if !keep {
			return false, nil
		}
	}
	rec.Topic, rec.Partition = r.Topic, r.Partition
	rec.KeySchema, rec.Key, rec.ValueSchema, rec.Value = r.KeySchema, r.Key, r.ValueSchema, r.Value
	rec.Timestamp, rec.Headers = r.Timestamp, r.Headers
	return true, nil
}
