package datachan

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func encFrame(typ byte, stream uint32, meta, bulk []byte) []byte {
	b := AppendHeader(nil, typ, stream, len(meta), len(bulk))
	b = append(b, meta...)
	return append(b, bulk...)
}

func TestFrameRoundTrip(t *testing.T) {
	type fr struct {
		typ        byte
		stream     uint32
		meta, bulk []byte
	}
	frames := []fr{
		{TypeHello, 0, Hello, nil},
		{TypeOpen, 1, []byte{2}, nil},
		{TypeMsg, 1, []byte("meta"), bytes.Repeat([]byte{7}, 100_000)},
		{TypeMsg, 1, nil, nil},
		{TypeMsg, 4_000_000_000, []byte{0}, []byte{1}},
		{TypeEnd, 1, []byte("boom"), nil},
		{TypeReset, 9, nil, nil},
	}
	var stream []byte
	for _, f := range frames {
		stream = append(stream, encFrame(f.typ, f.stream, f.meta, f.bulk)...)
	}
	r := NewFrameReader(bytes.NewReader(stream), 1<<20)
	for i, want := range frames {
		got, err := r.Next()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if got.Type != want.typ || got.Stream != want.stream || !bytes.Equal(got.Meta, want.meta) || !bytes.Equal(got.Bulk, want.bulk) {
			t.Fatalf("frame %d: got type %d stream %d meta %q, %d bulk bytes", i, got.Type, got.Stream, got.Meta, len(got.Bulk))
		}
		if len(want.bulk) == 0 && got.Bulk != nil {
			t.Fatalf("frame %d: bulk allocated for an empty bulk", i)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the last frame: %v", err)
	}
}

// TestFrameReaderRejects: headers that break the framing are ErrProtocol
// before anything is allocated for them; truncations are unexpected EOFs.
func TestFrameReaderRejects(t *testing.T) {
	const limit = 1 << 10
	hdr := func(body, stream uint32, typ byte, meta uint32) []byte {
		b := make([]byte, HeaderSize)
		b[0], b[1], b[2], b[3] = byte(body), byte(body>>8), byte(body>>16), byte(body>>24)
		b[4], b[5], b[6], b[7] = byte(stream), byte(stream>>8), byte(stream>>16), byte(stream>>24)
		b[8] = typ
		b[9], b[10], b[11], b[12] = byte(meta), byte(meta>>8), byte(meta>>16), byte(meta>>24)
		return b
	}
	cases := map[string][]byte{
		"oversized":          hdr(limit+1, 1, TypeMsg, 0),
		"4 GiB":              hdr(0xffffffff, 1, TypeMsg, 0),
		"meta beyond body":   hdr(10, 1, TypeMsg, 11),
		"type 0":             hdr(0, 1, 0, 0),
		"type 6":             hdr(0, 1, 6, 0),
		"hello on stream 3":  hdr(0, 3, TypeHello, 0),
		"msg on stream 0":    hdr(0, 0, TypeMsg, 0),
		"bulk on open":       hdr(2, 1, TypeOpen, 1),
		"bulk on end":        hdr(5, 1, TypeEnd, 0),
		"text is not frames": []byte("hello from a connector that prints to stdout\n"),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := NewFrameReader(bytes.NewReader(data), limit).Next()
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("got %v, want ErrProtocol", err)
			}
			t.Log(err)
		})
	}
	full := encFrame(TypeMsg, 1, []byte("meta"), []byte("bulk"))
	for n := 1; n < len(full); n++ {
		_, err := NewFrameReader(bytes.NewReader(full[:n]), limit).Next()
		if err != io.ErrUnexpectedEOF {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
}

// FuzzFrameReader: any byte stream yields frames, a clean EOF, an
// unexpected EOF or ErrProtocol; never a panic, and never a frame above
// the limit. Frames it accepts encode back to the same bytes.
func FuzzFrameReader(f *testing.F) {
	f.Add(encFrame(TypeHello, 0, Hello, nil))
	f.Add(append(encFrame(TypeOpen, 1, []byte{1}, nil), encFrame(TypeMsg, 1, []byte{8, 1}, []byte("records"))...))
	f.Add(encFrame(TypeEnd, 1, []byte("error text"), nil))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 3, 0, 0, 0, 0})
	const limit = 1 << 16
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewFrameReader(bytes.NewReader(data), limit)
		var again []byte
		for {
			fr, err := r.Next()
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.Is(err, ErrProtocol) {
					t.Fatalf("unexpected error %v", err)
				}
				if err == io.EOF && !bytes.Equal(again, data) {
					t.Fatalf("frames re-encode to %x, input %x", again, data)
				}
				return
			}
			if len(fr.Meta)+len(fr.Bulk) > limit {
				t.Fatalf("frame of %d bytes above the limit", len(fr.Meta)+len(fr.Bulk))
			}
			again = append(again, encFrame(fr.Type, fr.Stream, fr.Meta, fr.Bulk)...)
		}
	})
}
