// Package chain: TEMPORARY stand-in so the plugins branch builds before the sdkdata branch lands; delete this file when merging sdkdata.
package chain

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/framework/sdk"
)

type Raw struct {
	Topic      string
	Partition  int32
	Offset     int64
	Key, Value []byte
	Headers    []sdk.Header
	Timestamp  time.Time
}
type Failure struct {
	Stage sdk.Stage
	Class string
	Err   error
}

func (f *Failure) Error() string { return fmt.Sprintf("%s %s: %v", f.Stage, f.Class, f.Err) }

type Defaults map[string]string

type conv int

const (
	convBytes conv = iota
	convString
	convJSON
)

func pick(props map[string]string, d Defaults, key string) (conv, error) {
	v, ok := props[key]
	if !ok {
		v = d[key]
	}
	switch {
	case v == "" || strings.HasSuffix(v, "ByteArrayConverter"):
		return convBytes, nil
	case strings.HasSuffix(v, "StringConverter"):
		return convString, nil
	case strings.HasSuffix(v, "JsonConverter"):
		return convJSON, nil
	}
	return 0, fmt.Errorf("unknown converter %q", v)
}

type Source struct{ k, v conv }
type Sink struct{ k, v conv }

func NewSource(props map[string]string, d Defaults) (*Source, error) {
	k, err := pick(props, d, "key.converter")
	if err != nil {
		return nil, err
	}
	v, err := pick(props, d, "value.converter")
	if err != nil {
		return nil, err
	}
	return &Source{k, v}, nil
}
func NewSink(props map[string]string, d Defaults) (*Sink, error) {
	s, err := NewSource(props, d)
	if err != nil {
		return nil, err
	}
	return &Sink{s.k, s.v}, nil
}

func from(c conv, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	switch c {
	case convBytes:
		b, ok := v.([]byte)
		if !ok {
			return nil, fmt.Errorf("not bytes: %T", v)
		}
		return b, nil
	case convString:
		return []byte(fmt.Sprint(v)), nil
	}
	return json.Marshal(v)
}
func to(c conv, b []byte) (any, error) {
	if b == nil {
		return nil, nil
	}
	switch c {
	case convBytes:
		return b, nil
	case convString:
		return string(b), nil
	}
	var v any
	err := json.Unmarshal(b, &v)
	return v, err
}

func (s *Source) Apply(rec *sdk.SourceRecord) (Raw, bool, *Failure) {
	k, err := from(s.k, rec.Key)
	if err != nil {
		return Raw{}, false, &Failure{Stage: sdk.StageKeyConverter, Class: "standin", Err: err}
	}
	v, err := from(s.v, rec.Value)
	if err != nil {
		return Raw{}, false, &Failure{Stage: sdk.StageValueConverter, Class: "standin", Err: err}
	}
	return Raw{Topic: rec.Topic, Partition: rec.Partition, Key: k, Value: v, Headers: rec.Headers, Timestamp: rec.Timestamp}, true, nil
}

func (s *Sink) Apply(in Raw) (*sdk.SinkRecord, bool, *Failure) {
	k, err := to(s.k, in.Key)
	if err != nil {
		return nil, false, &Failure{Stage: sdk.StageKeyConverter, Class: "standin", Err: err}
	}
	v, err := to(s.v, in.Value)
	if err != nil {
		return nil, false, &Failure{Stage: sdk.StageValueConverter, Class: "standin", Err: err}
	}
	return &sdk.SinkRecord{Topic: in.Topic, Partition: in.Partition, Offset: in.Offset, Key: k, Value: v, Headers: in.Headers, Timestamp: in.Timestamp,
		OriginalTopic: in.Topic, OriginalPartition: in.Partition, OriginalOffset: in.Offset}, true, nil
}
