package aerofake_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/aerospike/aerospike-client-go/v7/types"
)

// Per-record operations are atomic: concurrent increments from many client
// connections never lose an update.
func TestConcurrentAddIsAtomic(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "counter")
	const workers, each = 8, 250
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := c.AddBins(nil, k, as.NewBin("n", 1)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r := mustGet(t, c, k)
	if r.Bins["n"] != workers*each || r.Generation != workers*each {
		t.Fatalf("n=%v gen=%d, want %d for both", r.Bins["n"], r.Generation, workers*each)
	}
}

// Optimistic concurrency with EXPECT_GEN_EQUAL: read-modify-write loops that
// retry on GENERATION_ERROR apply every increment exactly once.
func TestConcurrentGenerationCAS(t *testing.T) {
	c := testClient(t)
	k := mustKey(t, "test", "demo", "cas")
	noErr(t, c.Put(nil, k, as.BinMap{"n": 0}))
	const workers, each = 6, 60
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	conflicts := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; {
				r, err := c.Get(nil, k)
				if err == nil {
					err = c.Put(genPolicy(as.EXPECT_GEN_EQUAL, r.Generation), k, as.BinMap{"n": r.Bins["n"].(int) + 1})
				}
				var ae as.Error
				switch {
				case err == nil:
					i++
				case errors.As(err, &ae) && ae.Matches(types.GENERATION_ERROR):
					mu.Lock()
					conflicts++
					mu.Unlock()
				default:
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	noErr(t, firstErr)
	r := mustGet(t, c, k)
	if r.Bins["n"] != workers*each || r.Generation != workers*each+1 {
		t.Fatalf("n=%v gen=%d, want n=%d gen=%d", r.Bins["n"], r.Generation, workers*each, workers*each+1)
	}
	t.Logf("%d generation conflicts retried", conflicts)
}

// Commands pipelined on one connection are answered in order.
func TestPipelinedCommands(t *testing.T) {
	srv, _ := testServer(t)
	rc := dialRaw(t, srv)
	const n = 300
	var all []byte
	for i := 0; i < n; i++ {
		all = append(all, frame(3, msgBody(0, 0x01, 0, 0, 0, keyFields(t, "test", "pipe", "k"),
			[][]byte{opBytes(5, 1, "n", int64Bytes(1))}))...)
		if i%50 == 0 {
			all = append(all, frame(1, []byte("node\n"))...)
		}
	}
	rc.send(all)
	for i := 0; i < n; i++ {
		code, total, body := rc.mustReply()
		if code != 0 || total != 30 {
			t.Fatalf("reply %d: rc %d len %d", i, code, total)
		}
		if gen := binary.BigEndian.Uint32(body[6:10]); gen != uint32(i+1) {
			t.Fatalf("reply %d: generation %d, want %d", i, gen, i+1)
		}
		if i%50 == 0 {
			typ, _, err := rc.readFrame()
			if err != nil || typ != 1 {
				t.Fatalf("info reply after command %d: type %d err %v", i, typ, err)
			}
		}
	}
	rec, ok, err := srv.RecordByKey("test", "pipe", "k")
	noErr(t, err)
	if !ok || rec.Bins["n"] != int64(n) {
		t.Fatalf("counter = %v (%v)", rec.Bins["n"], ok)
	}
}

// Many connections at once, each pipelining its own writes, while the real
// client keeps working.
func TestManyConnections(t *testing.T) {
	srv, c := testServer(t)
	const conns, each = 64, 25
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := 0; i < conns; i++ {
		rc := dialRaw(t, srv)
		var all []byte
		for j := 0; j < each; j++ {
			all = append(all, frame(3, msgBody(0, 0x01, 0, 0, 0, keyFields(t, "test", "many", fmt.Sprint(i, "-", j)),
				[][]byte{opBytes(2, 1, "v", int64Bytes(int64(j)))}))...)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := rc.c.Write(all); err != nil {
				errs <- err
				return
			}
			for j := 0; j < each; j++ {
				typ, body, err := rc.readFrame()
				if err != nil || typ != 3 || len(body) != 22 || body[5] != 0 {
					errs <- fmt.Errorf("conn %d reply %d: type %d body %x err %v", i, j, typ, body, err)
					return
				}
			}
		}()
	}
	noErr(t, c.Put(nil, mustKey(t, "test", "many", "client"), as.BinMap{"v": 1}))
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := srv.Count("test", "many"); n != conns*each+1 {
		t.Fatalf("count %d, want %d", n, conns*each+1)
	}
}
