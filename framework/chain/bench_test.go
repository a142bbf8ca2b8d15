package chain

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/sdk"
)

// jsonValue1K returns a schemaless value whose JSON form is about 1 KiB:
// a flat event of strings and numbers with one nested object, like a
// typical application record.
func jsonValue1K() map[string]any {
	v := map[string]any{
		"id":        int64(1234567890),
		"user":      "user-000042",
		"ts":        int64(1717000000000),
		"amount":    1234.5,
		"currency":  "EUR",
		"active":    true,
		"tags":      []any{"alpha", "beta", "gamma"},
		"geo":       map[string]any{"lat": 48.8566, "lon": 2.3522, "city": "Paris"},
		"userAgent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36",
	}
	for i := 0; i < 14; i++ {
		v[fmt.Sprintf("attr%02d", i)] = strings.Repeat(string(rune('a'+i)), 40)
	}
	return v
}

func benchSource(b *testing.B, props map[string]string, rec *sdk.SourceRecord) {
	s, err := NewSource(props, nil)
	if err != nil {
		b.Fatal(err)
	}
	out, _, fail := s.Apply(rec)
	if fail != nil {
		b.Fatal(fail)
	}
	if n := len(out.Value); n < 1000 || n > 1100 {
		b.Fatalf("record is %d bytes, want about 1 KiB", n)
	}
	b.SetBytes(int64(len(out.Value)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for b.Loop() {
		if _, _, fail := s.Apply(rec); fail != nil {
			b.Fatal(fail)
		}
	}
	cpu.report(b)
}

type cpuMeter struct {
	start time.Duration
	ok    bool
}

func startCPU() cpuMeter {
	t, ok := processCPU()
	return cpuMeter{start: t, ok: ok}
}

// report adds cpu-ns/record: process CPU time per iteration.
func (m cpuMeter) report(b *testing.B) {
	end, ok := processCPU()
	if m.ok && ok && b.N > 0 {
		b.ReportMetric(float64(end-m.start)/float64(b.N), "cpu-ns/record")
	}
}

func benchSink(b *testing.B, props map[string]string, in Raw) {
	s, err := NewSink(props, nil)
	if err != nil {
		b.Fatal(err)
	}
	var rec sdk.SinkRecord
	if _, fail := s.ApplyTo(in, &rec); fail != nil {
		b.Fatal(fail)
	}
	b.SetBytes(int64(len(in.Value)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for b.Loop() {
		if _, fail := s.ApplyTo(in, &rec); fail != nil {
			b.Fatal(fail)
		}
	}
	cpu.report(b)
}

var (
	byteArrayProps = map[string]string{
		"key.converter":   "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
	}
	jsonProps = map[string]string{
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
	}
)

// BenchmarkApply measures the per-record cost of the chain for 1 KiB
// records: one op is one record.
func BenchmarkApply(b *testing.B) {
	raw := []byte(strings.Repeat("x", 1024))
	b.Run("source/ByteArray", func(b *testing.B) {
		benchSource(b, byteArrayProps, &sdk.SourceRecord{Topic: "t", Key: []byte("key-42"), Value: raw})
	})
	b.Run("source/Json", func(b *testing.B) {
		benchSource(b, jsonProps, &sdk.SourceRecord{Topic: "t", Key: "key-42", Value: jsonValue1K()})
	})
	jsonBytes := func() []byte {
		s, _ := NewSource(jsonProps, nil)
		out, _, _ := s.Apply(&sdk.SourceRecord{Topic: "t", Value: jsonValue1K()})
		return out.Value
	}()
	b.Run("sink/ByteArray", func(b *testing.B) {
		benchSink(b, byteArrayProps, Raw{Topic: "t", Key: []byte("key-42"), Value: raw})
	})
	b.Run("sink/Json", func(b *testing.B) {
		benchSink(b, jsonProps, Raw{Topic: "t", Key: []byte("key-42"), Value: jsonBytes})
	})
	b.Run("sink/Json+InsertField+RegexRouter", func(b *testing.B) {
		props := map[string]string{
			"transforms": "ins,route", "transforms.ins.type": "InsertField$Value", "transforms.ins.offset.field": "off",
			"transforms.route.type": "RegexRouter", "transforms.route.regex": "(.*)", "transforms.route.replacement": "$1-out",
		}
		for k, v := range jsonProps {
			props[k] = v
		}
		benchSink(b, props, Raw{Topic: "t", Key: []byte("key-42"), Value: jsonBytes})
	})
}

// BenchmarkReferenceEncodingJSON runs the standard library's encoding/json
// on the same 1 KiB value, so that the Json rows of BenchmarkApply can be
// quoted as a ratio measured in the same run on the same (shared) machine.
func BenchmarkReferenceEncodingJSON(b *testing.B) {
	v := jsonValue1K()
	enc, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("marshal", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		b.ReportAllocs()
		cpu := startCPU()
		for b.Loop() {
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
		cpu.report(b)
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		b.ReportAllocs()
		cpu := startCPU()
		for b.Loop() {
			var out map[string]any
			if err := json.Unmarshal(enc, &out); err != nil {
				b.Fatal(err)
			}
		}
		cpu.report(b)
	})
}
