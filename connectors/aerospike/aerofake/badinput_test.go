package aerofake_test

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

// Frames whose boundaries cannot be trusted close that connection only: the
// real client on its own connections keeps working.
func TestBadFramesCloseConnection(t *testing.T) {
	srv := startServer(t, aerofake.Config{MaxMessageSize: 1 << 20})
	c := newClient(t, srv)
	k := mustKey(t, "test", "demo", "survivor")
	noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	header := func(version, typ byte, size uint64) []byte {
		return binary.BigEndian.AppendUint64(nil, uint64(version)<<56|uint64(typ)<<48|size)
	}
	for name, b := range map[string][]byte{
		"wrong version":           append(header(1, 3, 22), make([]byte, 22)...),
		"unknown type":            append(header(2, 9, 4), 1, 2, 3, 4),
		"oversized message":       header(2, 3, 1<<20+1),
		"oversized info":          header(2, 1, 1<<20+1),
		"oversized admin":         header(2, 2, 1<<20),
		"max u48 size":            header(2, 3, 0xFFFFFFFFFFFF),
		"truncated body then EOF": append(header(2, 3, 1000), make([]byte, 10)...),
	} {
		t.Run(name, func(t *testing.T) {
			rc := dialRaw(t, srv)
			rc.send(b)
			if name == "truncated body then EOF" {
				_ = rc.c.(*net.TCPConn).CloseWrite()
			}
			rc.expectClosed()
			wantGen(t, c, k, 1)
		})
	}
	if srv.Stats().MalformedFrames < 6 {
		t.Fatalf("MalformedFrames = %d", srv.Stats().MalformedFrames)
	}
}

// Broken messages inside an intact frame get a 30-byte error reply and the
// connection stays usable.
func TestBadMessagesAnswerAndKeepConnection(t *testing.T) {
	srv, _ := testServer(t)
	kf := keyFields(t, "test", "demo", "k")
	truncatedFields := msgBody(0x03, 0, 0, 0, 0, kf, nil)
	binary.BigEndian.PutUint16(truncatedFields[18:], 9)
	hugeField := msgBody(0x03, 0, 0, 0, 0, kf, nil)
	binary.BigEndian.PutUint32(hugeField[22:], 0xFFFFFFFF)
	trailing := append(msgBody(0x03, 0, 0, 0, 0, kf, nil), 0xAA)
	hugeOp := append(msgBody(0, 1, 0, 0, 0, kf, nil), 0xFF, 0xFF, 0xFF, 0xFF, 2, 1, 0, 0)
	binary.BigEndian.PutUint16(hugeOp[20:], 1)
	deep := bytes.Repeat([]byte{0x91}, 1000)
	deep = append(deep, 0x01)
	cases := map[string]struct {
		typ  byte
		body []byte
		rc   byte
	}{
		"empty message":        {3, nil, 4},
		"short header":         {3, make([]byte, 10), 4},
		"field count too high": {3, truncatedFields, 4},
		"field size too large": {3, hugeField, 4},
		"trailing bytes":       {3, trailing, 4},
		"op size too large":    {3, hugeOp, 4},
		// Nesting is capped at 32 levels; CE 8.1's answer to a 1000-deep
		// list is not on record (see the package doc).
		"deeply nested list": {3, msgBody(0, 1, 0, 0, 0, kf, [][]byte{opBytes(2, 20, "l", deep)}), 4},
		"bad cdt payload": {3, msgBody(0, 0x81, 0, 0, 0, kf, [][]byte{
			opBytes(4, 4, "m", []byte{0x00, 0x43, 0x93, 0xc1})}), 4},
		"cdt context": {3, msgBody(0, 0x81, 0, 0, 0, kf, [][]byte{
			opBytes(4, 4, "m", []byte{0x93, 0xcc, 0xff, 0x90, 0x91, 0x43})}), 16},
		"list op":           {3, msgBody(0, 0x81, 0, 0, 0, kf, [][]byte{opBytes(4, 4, "l", []byte{0x00, 0x03, 0x92, 0x00, 0x01})}), 16}, // list insert: only append is modelled
		"udf field":         {3, msgBody(0, 1, 0, 0, 0, append(kf, fieldBytes(30, []byte("pkg"))), [][]byte{opBytes(2, 1, "v", int64Bytes(1))}), 16},
		"filter expression": {3, msgBody(0x03, 0, 0, 0, 0, append(kf, fieldBytes(43, []byte{0xc3})), nil), 16},
		"bits op":           {3, msgBody(0, 1, 0, 0, 0, kf, [][]byte{opBytes(13, 4, "b", []byte{0})}), 16},
		"unknown namespace": {3, msgBody(0x03, 0, 0, 0, 0, keyFields(t, "nope", "demo", "k"), nil), 20},
		"compressed":        {4, append(binary.BigEndian.AppendUint64(nil, 100), 0x78, 0x9c), 25},
		"batch count too high": {3, msgBody(0x08, 0, 0, 0, 0, [][]byte{
			fieldBytes(41, append(binary.BigEndian.AppendUint32(nil, 1000), 1))}, nil), 4},
		"batch repeat first": {3, msgBody(0x08, 0, 0, 0, 0, [][]byte{
			fieldBytes(41, append(append(binary.BigEndian.AppendUint32(nil, 1), 1, 0, 0, 0, 0), append(make([]byte, 20), 1)...))}, nil), 4},
		"scan odd pid array": {3, msgBody(0x01, 0, 0x04, 0, 0, [][]byte{
			fieldBytes(0, []byte("test")), fieldBytes(11, []byte{1, 2, 3})}, nil), 4},
		"scan bad pid": {3, msgBody(0x01, 0, 0x04, 0, 0, [][]byte{
			fieldBytes(0, []byte("test")), fieldBytes(11, []byte{0xFF, 0xFF})}, nil), 4},
		"scan unknown namespace":          {3, msgBody(0x01, 0, 0x04, 0, 0, [][]byte{fieldBytes(0, []byte("nope"))}, nil), 20},
		"scan without partition-done bit": {3, msgBody(0x01, 0, 0, 0, 0, [][]byte{fieldBytes(0, []byte("test"))}, nil), 16},
		"background scan":                 {3, msgBody(0, 0x01, 0x04, 0, 0, [][]byte{fieldBytes(0, []byte("test"))}, [][]byte{opBytes(2, 1, "v", int64Bytes(1))}), 16},
		"secondary index query": {3, msgBody(0x01, 0, 0x04, 0, 0, [][]byte{
			fieldBytes(0, []byte("test")), fieldBytes(21, []byte("idx"))}, nil), 16},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rc := dialRaw(t, srv)
			rc.send(frame(tc.typ, tc.body))
			code, total, body := rc.mustReply()
			if code != tc.rc || total != 30 {
				t.Fatalf("rc %d in %d bytes (%x), want rc %d in 30 bytes", code, total, body, tc.rc)
			}
			rc.send(frame(1, []byte("node\n")))
			if typ, _, err := rc.readFrame(); err != nil || typ != 1 {
				t.Fatalf("connection unusable after the error: type %d err %v", typ, err)
			}
		})
	}
}

// Garbage from many connections at once never disturbs the real client or
// the stored data.
func TestGarbageConnectionsDoNotDisturbOthers(t *testing.T) {
	srv, c := testServer(t)
	ks := keys(t, "test", "demo", 0, 50)
	for _, k := range ks {
		noErr(t, c.Put(nil, k, as.BinMap{"v": 1}))
	}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			for j := 0; j < 20; j++ {
				nc, err := net.Dial("tcp", srv.Addr())
				if err != nil {
					return
				}
				// A plausible header (so frames get parsed) followed by noise.
				body := make([]byte, rng.IntN(200))
				for b := range body {
					body[b] = byte(rng.Uint32())
				}
				if len(body) > 0 {
					body[0] = 22
				}
				typ := []byte{1, 2, 3, 3, 3, 4, 7}[rng.IntN(7)]
				_ = nc.SetDeadline(time.Now().Add(2 * time.Second))
				_, _ = nc.Write(frame(typ, body))
				_, _ = nc.Read(make([]byte, 64))
				_ = nc.Close()
			}
		}()
	}
	for i := 0; i < 200; i++ {
		noErr(t, c.AddBins(nil, ks[i%len(ks)], as.NewBin("v", 1)))
	}
	wg.Wait()
	recs, err := c.BatchGet(nil, ks)
	noErr(t, err)
	for i, r := range recs {
		if r == nil || r.Bins["v"] != 5 {
			t.Fatalf("record %d = %v, want v=5", i, r)
		}
	}
}
