package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/sdk"
)

func TestPackedRoundTrip(t *testing.T) {
	recs := []chain.Raw{
		{Topic: "a", Partition: 3, Offset: 42, Key: []byte("k"), Value: []byte("v"), Timestamp: time.Unix(0, 1_700_000_000_123_456_789)},
		{Topic: "a", Partition: sdk.AnyPartition, Key: nil, Value: nil}, // nulls
		{Topic: "b", Key: []byte{}, Value: []byte{}},                    // empties
		{Topic: "é", Headers: []sdk.Header{{Key: "h", Value: nil}, {Key: "e", Value: []byte{}}, {Key: "x", Value: []byte{1, 2}}}},
		{Topic: "big", Value: bytes.Repeat([]byte{7}, 1<<20), Offset: -1},
	}
	var buf []byte
	for i := range recs {
		buf = AppendRecord(buf, &recs[i])
		buf = AppendSourceExtras(buf, []byte(`{"p":1}`), []byte(`{"o":2}`), byte(i%3))
	}
	var d Decoder
	d.Reset(buf)
	for i, want := range recs {
		var got chain.Raw
		if err := d.Record(&got); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		p, o, b, err := d.SourceExtras()
		if err != nil || string(p) != `{"p":1}` || string(o) != `{"o":2}` || b != byte(i%3) {
			t.Fatalf("extras %d: %q %q %d %v", i, p, o, b, err)
		}
		if got.Topic != want.Topic || got.Partition != want.Partition || got.Offset != want.Offset ||
			!got.Timestamp.Equal(want.Timestamp) || got.Timestamp.IsZero() != want.Timestamp.IsZero() ||
			!same(got.Key, want.Key) || !same(got.Value, want.Value) || len(got.Headers) != len(want.Headers) {
			t.Fatalf("record %d: got %+v want %+v", i, got, want)
		}
		for j := range want.Headers {
			if got.Headers[j].Key != want.Headers[j].Key || !same(got.Headers[j].Value, want.Headers[j].Value) {
				t.Fatalf("record %d header %d: %+v", i, j, got.Headers[j])
			}
		}
	}
	if d.Len() != 0 {
		t.Fatalf("%d bytes left", d.Len())
	}
}

func same(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// TestPackedMalformed: every truncation of a valid record, and some
// garbage, is an error, never a panic or an out-of-range slice.
func TestPackedMalformed(t *testing.T) {
	r := chain.Raw{Topic: "t", Key: []byte("key"), Value: []byte("value"), Headers: []sdk.Header{{Key: "h", Value: []byte("v")}}, Timestamp: time.Unix(1, 0)}
	full := AppendSourceExtras(AppendRecord(nil, &r), []byte("{}"), []byte("{}"), 0)
	for n := 0; n < len(full); n++ {
		var d Decoder
		d.Reset(full[:n])
		var got chain.Raw
		err := d.Record(&got)
		if err == nil {
			_, _, _, err = d.SourceExtras()
		}
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	for _, garbage := range [][]byte{{0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0, 1, 'a', 0, 0, 0xff, 0x7f}} {
		var d Decoder
		d.Reset(garbage)
		if err := d.Record(&chain.Raw{}); !errors.Is(err, ErrMalformed) {
			t.Fatalf("garbage %x: %v", garbage, err)
		}
	}
	bad := AppendSourceExtras(AppendRecord(nil, &r), []byte("{}"), []byte("{}"), 9)
	var d Decoder
	d.Reset(bad)
	_ = d.Record(&chain.Raw{})
	if _, _, _, err := d.SourceExtras(); !errors.Is(err, ErrMalformed) {
		t.Fatalf("boundary 9: %v", err)
	}
}

func FuzzDecoder(f *testing.F) {
	r := chain.Raw{Topic: "t", Key: []byte("k"), Value: []byte("v"), Headers: []sdk.Header{{Key: "h"}}}
	f.Add(AppendRecord(nil, &r))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Decoder
		d.Reset(data)
		for d.Len() > 0 {
			if d.Record(&chain.Raw{}) != nil {
				return
			}
		}
	})
}

// BenchmarkDecodeRecord decodes records like the boundary benchmark's (1
// KiB values, a short key, one topic, small offsets). One op is one record.
func BenchmarkDecodeRecord(b *testing.B) {
	var buf []byte
	for i := range 1000 {
		buf = AppendRecord(buf, &chain.Raw{Topic: "bench", Partition: int32(i % 4), Offset: int64(i), Key: []byte("key-0123456789"), Value: make([]byte, 1024)})
	}
	var d Decoder
	var r chain.Raw
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 1000 {
		d.Reset(buf)
		for range 1000 {
			if err := d.Record(&r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestVarintsMatchEncodingBinary: the decoder's varint fast paths agree
// with encoding/binary on every one- and two-byte input and on longer ones
// (values, lengths read, errors).
func TestVarintsMatchEncodingBinary(t *testing.T) {
	inputs := [][]byte{nil, {0x80}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}}
	for i := range 1 << 16 {
		inputs = append(inputs, []byte{byte(i)}, []byte{byte(i), byte(i >> 8)}, []byte{byte(i), byte(i >> 8), 0x01})
	}
	for _, in := range inputs {
		wantU, nU := binary.Uvarint(in)
		d := Decoder{buf: in}
		gotU, err := d.uvarint()
		if (nU <= 0) != (err != nil) || (err == nil && (gotU != wantU || len(in)-d.Len() != nU)) {
			t.Fatalf("uvarint(% x) = %d, %v, read %d; encoding/binary: %d, %d", in, gotU, err, len(in)-d.Len(), wantU, nU)
		}
		wantS, nS := binary.Varint(in)
		d = Decoder{buf: in}
		gotS, err := d.varint()
		if (nS <= 0) != (err != nil) || (err == nil && (gotS != wantS || len(in)-d.Len() != nS)) {
			t.Fatalf("varint(% x) = %d, %v, read %d; encoding/binary: %d, %d", in, gotS, err, len(in)-d.Len(), wantS, nS)
		}
	}
}
