package aerofake

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"
)

var updateFuzzSeeds = flag.Bool("update-fuzz-seeds", false,
	"rewrite testdata/fuzz/FuzzServeConn from captured client traffic")

// TestCaptureFuzzSeeds drives the real client through a recording proxy,
// replays every captured request frame through a fresh connection of a
// fresh server (the fuzz target's path), and with -update-fuzz-seeds writes
// the frames as the fuzz seed corpus.
func TestCaptureFuzzSeeds(t *testing.T) {
	frames, streams := captureClientTraffic(t)
	if len(frames) < 30 {
		t.Fatalf("captured only %d distinct frames", len(frames))
	}
	for _, fr := range frames {
		replayFrames(t, fr)
	}
	for _, st := range streams {
		replayFrames(t, st)
	}
	if !*updateFuzzSeeds {
		return
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzServeConn")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, fr := range frames {
		write(fmt.Sprintf("client-frame-%03d", i), fr)
	}
	for i, st := range streams {
		write(fmt.Sprintf("client-stream-%02d", i), st)
	}
	t.Logf("wrote %d seeds to %s", len(frames)+len(streams), dir)
}

func replayFrames(t *testing.T, data []byte) {
	t.Helper()
	s, err := newServer(Config{Namespaces: []NamespaceConfig{{Name: "test", AllowTTL: true}, {Name: "bar"}}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := newConn(s, nil, streamRW{Reader: bytes.NewReader(data), Writer: &out})
	if err := c.serve(); err != io.EOF {
		t.Fatalf("replay of %d captured bytes ended with %v, want EOF", len(data), err)
	}
	if out.Len() == 0 {
		t.Fatalf("replay of %d captured bytes produced no reply", len(data))
	}
}

// captureClientTraffic returns the distinct request frames the client sent,
// and the first frames of each connection's request stream (several frames
// back to back).
func captureClientTraffic(t *testing.T) (frames, streams [][]byte) {
	t.Helper()
	bufs := recordClient(t, func(c *as.Client) { driveClient(t, c) }, true)
	seen := map[string]bool{}
	for _, data := range bufs {
		var stream []byte // whole frames, up to about 4 KiB
		for _, fr := range splitFrames(data) {
			if len(stream) < 4096 {
				stream = append(stream, fr...)
			}
			if !seen[string(fr)] {
				seen[string(fr)] = true
				frames = append(frames, fr)
			}
		}
		if len(stream) > 0 {
			streams = append(streams, stream)
		}
	}
	if len(streams) > 8 {
		streams = streams[:8]
	}
	return frames, streams
}

// splitFrames cuts a request stream into whole proto frames.
func splitFrames(data []byte) [][]byte {
	var out [][]byte
	for len(data) >= 8 {
		size := int(binary.BigEndian.Uint64(data) & 0xFFFFFFFFFFFF)
		if 8+size > len(data) {
			break
		}
		out = append(out, append([]byte(nil), data[:8+size]...))
		data = data[8+size:]
	}
	return out
}

// recordClient runs drive with a real client connected through a recording
// proxy and returns each connection's client-to-server bytes. With login, a
// second client with credentials also connects (to capture a login).
func recordClient(t testing.TB, drive func(*as.Client), login bool) [][]byte {
	t.Helper()
	cfg := Config{Namespaces: []NamespaceConfig{{Name: "test", AllowTTL: true}, {Name: "bar"}}}
	if login {
		// Community Edition refuses logins; an Enterprise server accepts it.
		cfg.EnterpriseSecurity = &Security{Users: map[string]string{"user": "pass"}}
	}
	srv, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		bufs    []*bytes.Buffer
		copiers sync.WaitGroup
	)
	go func() {
		for {
			cc, err := ln.Accept()
			if err != nil {
				return
			}
			sc, err := net.Dial("tcp", srv.Addr())
			if err != nil {
				cc.Close()
				continue
			}
			buf := new(bytes.Buffer)
			mu.Lock()
			bufs = append(bufs, buf)
			mu.Unlock()
			copiers.Add(2)
			go func() {
				defer copiers.Done()
				_, _ = io.Copy(sc, io.TeeReader(cc, lockedWriter{&mu, buf}))
				sc.Close()
			}()
			go func() {
				defer copiers.Done()
				_, _ = io.Copy(cc, sc)
				cc.Close()
			}()
		}
	}()

	port := ln.Addr().(*net.TCPAddr).Port
	policy := as.NewClientPolicy()
	policy.Timeout = 5 * time.Second
	c, err := as.NewClientWithPolicyAndHost(policy, as.NewHost("127.0.0.1", port))
	if err != nil {
		t.Fatal(err)
	}
	drive(c)
	c.Close()
	if login {
		policy.User, policy.Password = "user", "pass"
		ca, err := as.NewClientWithPolicyAndHost(policy, as.NewHost("127.0.0.1", port))
		if err != nil {
			t.Fatal(err)
		}
		ca.Close()
	}
	ln.Close()
	srv.DropConnections()
	copiers.Wait()
	out := make([][]byte, 0, len(bufs))
	for _, b := range bufs {
		out = append(out, b.Bytes())
	}
	return out
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// driveClient exercises every command shape the server implements.
func driveClient(t *testing.T, c *as.Client) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	key := func(ns, set string, k any) *as.Key {
		kk, err := as.NewKey(ns, set, k)
		must(err)
		return kk
	}
	k1, k2, k3 := key("test", "demo", "k1"), key("test", "demo", 2), key("bar", "", []byte{1, 2})
	wp := as.NewWritePolicy(0, 100)
	wp.SendKey = true
	must(c.Put(wp, k1, as.BinMap{"i": 1, "f": 1.5, "s": "x", "b": []byte{1}, "t": true,
		"l": []any{1, "a", []byte{2}}, "m": map[any]any{"a": 1, 2: []any{3}}}))
	must(c.Put(nil, k3, as.BinMap{"v": 1}))
	cop := as.NewWritePolicy(0, 0)
	cop.RecordExistsAction = as.CREATE_ONLY
	_ = c.Put(cop, k1, as.BinMap{"i": 2})
	gp := as.NewWritePolicy(1, 0)
	gp.GenerationPolicy = as.EXPECT_GEN_EQUAL
	_ = c.Put(gp, k2, as.BinMap{"i": 2})
	rp := as.NewWritePolicy(0, 0)
	rp.RecordExistsAction = as.REPLACE
	must(c.Put(rp, k2, as.BinMap{"i": 3}))
	_, _ = c.Get(nil, k1)
	_, _ = c.Get(nil, k1, "i", "s")
	_, _ = c.GetHeader(nil, k1)
	_, _ = c.Exists(nil, k2)
	must(c.AddBins(nil, k1, as.NewBin("i", 5)))
	must(c.AppendBins(nil, k1, as.NewBin("s", "y")))
	must(c.PrependBins(nil, k1, as.NewBin("s", "w")))
	must(c.Touch(nil, k1))
	mp := as.DefaultMapPolicy()
	_, err := c.Operate(nil, k1,
		as.MapPutOp(mp, "m", "k", 1),
		as.MapPutItemsOp(mp, "m", map[any]any{"x": 1, "y": "z"}),
		as.MapIncrementOp(mp, "m", "k", 2),
		as.MapDecrementOp(mp, "m", "k", 1.5),
		as.MapGetByKeyOp("m", "k", as.MapReturnType.VALUE),
		as.MapGetByKeyListOp("m", []any{"x", "y"}, as.MapReturnType.KEY_VALUE),
		as.MapRemoveByKeyOp("m", "x", as.MapReturnType.COUNT),
		as.MapSizeOp("m"),
		as.PutOp(as.NewBin("p", 1)),
		as.GetBinOp("p"))
	must(err)
	_, err = c.Operate(nil, k1, as.MapPutOp(as.NewMapPolicyWithFlags(as.MapOrder.KEY_ORDERED, as.MapWriteFlagsCreateOnly|as.MapWriteFlagsNoFail), "o", 3, 1),
		as.MapClearOp("m"), as.GetOp())
	must(err)
	_, err = c.Operate(nil, k2, as.DeleteOp(), as.PutOp(as.NewBin("pos", 1)))
	must(err)
	keys := []*as.Key{k1, k2, k3, key("test", "demo", "missing")}
	_, err = c.BatchGet(nil, keys)
	must(err)
	_, err = c.BatchGet(nil, keys, "i")
	must(err)
	_, err = c.BatchExists(nil, keys)
	must(err)
	_, err = c.BatchGetHeader(nil, keys)
	must(err)
	bwp := as.NewBatchWritePolicy()
	bwp.GenerationPolicy, bwp.Generation = as.EXPECT_GEN_EQUAL, 3
	bdp := as.NewBatchDeletePolicy()
	bdp.GenerationPolicy, bdp.Generation = as.EXPECT_GEN_GT, 9
	must(c.BatchOperate(nil, []as.BatchRecordIfc{
		as.NewBatchWrite(bwp, k1, as.PutOp(as.NewBin("i", 9)), as.MapPutOp(mp, "m", "t-0", 7)),
		as.NewBatchWrite(nil, key("test", "demo", "n1"), as.AddOp(as.NewBin("n", 1))),
		as.NewBatchWrite(nil, key("test", "demo", "n2"), as.AddOp(as.NewBin("n", 1))),
		as.NewBatchRead(nil, k2, nil),
		as.NewBatchRead(nil, k3, []string{"v"}),
		as.NewBatchReadHeader(nil, k1),
		as.NewBatchDelete(bdp, k3),
		as.NewBatchDelete(nil, key("test", "demo", "missing")),
	}))
	_, err = c.BatchDelete(nil, nil, []*as.Key{key("test", "demo", "n1"), key("test", "demo", "n2")})
	must(err)
	for _, set := range []string{"demo", ""} {
		rs, err := c.ScanAll(nil, "test", set)
		must(err)
		for range rs.Results() {
		}
	}
	sp := as.NewScanPolicy()
	sp.MaxRecords = 1
	rs, err := c.ScanPartitions(sp, as.NewPartitionFilterByRange(0, 4096), "test", "demo", "i")
	must(err)
	for range rs.Results() {
	}
	rs, err = c.Query(nil, as.NewStatement("test", "demo", "i"))
	must(err)
	for range rs.Results() {
	}
	must(c.Truncate(nil, "test", "demo", nil))
	must(c.Truncate(nil, "bar", "", nil))
	_, _ = c.Delete(nil, k1)
}
