package chain

import (
	"errors"
	"time"

	"github.com/connectd/connectd/framework/sdk"
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

// Failure describes a per-record failure inside the chain.
type Failure struct {
	Stage sdk.Stage
	Class string // executing class, e.g. a transformation or converter class name
	Err   error
}

func (f *Failure) Error() string {
	return string(f.Stage) + " (" + f.Class + "): " + f.Err.Error()
}

func (f *Failure) Unwrap() error { return f.Err }

var errNotYet = errors.New("chain: not implemented yet")

// Source applies a source connector's transforms and converters.
type Source struct{}

// NewSource builds the chain from a full connector/task config.
func NewSource(props map[string]string, defaults Defaults) (*Source, error) {
	return nil, errNotYet
}

// Apply runs transforms then converters. keep=false: filtered.
func (s *Source) Apply(rec *sdk.SourceRecord) (out Raw, keep bool, fail *Failure) {
	return Raw{}, false, &Failure{Stage: sdk.StageTransformation, Err: errNotYet}
}

// Sink applies a sink connector's converters and transforms.
type Sink struct{}

// NewSink builds the chain from a full connector/task config.
func NewSink(props map[string]string, defaults Defaults) (*Sink, error) {
	return nil, errNotYet
}

// Apply runs converters then transforms. keep=false: filtered.
func (s *Sink) Apply(in Raw) (rec *sdk.SinkRecord, keep bool, fail *Failure) {
	rec = new(sdk.SinkRecord)
	keep, fail = s.ApplyTo(in, rec)
	return rec, keep, fail
}

// ApplyTo is Apply writing into a caller-owned record.
func (s *Sink) ApplyTo(in Raw, rec *sdk.SinkRecord) (keep bool, fail *Failure) {
	return false, &Failure{Stage: sdk.StageKeyConverter, Err: errNotYet}
}
