package aerofake

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
)

// streamRW serves a byte stream as one connection: reads come from the fuzz
// input, replies are discarded.
type streamRW struct {
	io.Reader
	io.Writer
}

// FuzzServeConn feeds arbitrary bytes to one connection's frame loop: proto
// framing, info, admin, AS_MSG parsing, single-record execution, batch,
// scan and map CDT decoding all run on hostile input. The seed corpus in
// testdata/fuzz/FuzzServeConn holds real client requests captured by
// TestCaptureFuzzSeeds; plain `go test` replays it as a unit test.
//
// CI: go test -run '^$' -fuzz '^FuzzServeConn$' -fuzztime 10s ./connectors/aerospike/aerofake/
func FuzzServeConn(f *testing.F) {
	hdr := func(version, typ byte, size uint64) []byte {
		return binary.BigEndian.AppendUint64(nil, uint64(version)<<56|uint64(typ)<<48|size)
	}
	f.Add(hdr(2, 3, 0))
	f.Add(hdr(1, 3, 22))
	f.Add(hdr(2, 9, 0))
	f.Add(hdr(2, 3, 0xFFFFFFFFFFFF))
	f.Add(append(hdr(2, 1, 5), "node\n"...))
	f.Add(append(hdr(2, 3, 22), 22, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
	f.Add(append(hdr(2, 4, 10), bytes.Repeat([]byte{0x78}, 10)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := newServer(Config{
			Namespaces:     []NamespaceConfig{{Name: "test", AllowTTL: true}, {Name: "bar"}},
			MaxMessageSize: 4 << 20,
			StatsInfo:      true,
		})
		if err != nil {
			t.Fatal(err)
		}
		c := newConn(s, nil, streamRW{Reader: bytes.NewReader(data), Writer: io.Discard})
		_ = c.serve() // must return, never panic
		// Whatever got stored must decode.
		for _, ns := range s.nsOrder {
			for _, r := range s.Records(ns, "") {
				if r.Generation == 0 {
					t.Fatalf("stored record with generation 0: %+v", r)
				}
			}
		}
	})
}
