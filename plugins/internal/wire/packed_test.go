package wire

import (
	"bytes"
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
