package aerofake

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"
)

// Server-only benchmarks: request frames captured from the real client are
// replayed over loopback and the replies read back, so the figures are the
// server's capacity without the client's encoding and decoding.

// largestMsgFrame returns the biggest AS_MSG frame the client sent.
func largestMsgFrame(tb testing.TB, bufs [][]byte) []byte {
	tb.Helper()
	var best []byte
	for _, data := range bufs {
		for _, fr := range splitFrames(data) {
			if fr[1] == protoMsg && len(fr) > len(best) {
				best = fr
			}
		}
	}
	if best == nil {
		tb.Fatal("no AS_MSG frame captured")
	}
	return best
}

// readBatchReply reads proto frames until one ends with a LAST message.
func readBatchReply(r *bufio.Reader, hdr []byte, body *[]byte) error {
	for {
		if _, err := io.ReadFull(r, hdr); err != nil {
			return err
		}
		size := int(binary.BigEndian.Uint64(hdr) & 0xFFFFFFFFFFFF)
		if cap(*body) < size {
			*body = make([]byte, size)
		}
		b := (*body)[:size]
		if _, err := io.ReadFull(r, b); err != nil {
			return err
		}
		if size >= msgHeaderSize && b[size-msgHeaderSize+3]&info3Last != 0 {
			return nil
		}
	}
}

func serverBench(b *testing.B, frame []byte, perOp int, batch bool) {
	srv, err := Start(context.Background(), Config{
		Namespaces: []NamespaceConfig{{Name: "test", AllowTTL: true}, {Name: "bar"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	r := bufio.NewReaderSize(nc, 256<<10)
	hdr := make([]byte, 8)
	var body []byte
	b.ResetTimer()
	cpu0 := processCPUTime()
	for i := 0; i < b.N; i++ {
		if _, err := nc.Write(frame); err != nil {
			b.Fatal(err)
		}
		if batch {
			if err := readBatchReply(r, hdr, &body); err != nil {
				b.Fatal(err)
			}
			continue
		}
		for j := 0; j < perOp; j++ {
			if _, err := io.ReadFull(r, hdr); err != nil {
				b.Fatal(err)
			}
			size := int(binary.BigEndian.Uint64(hdr) & 0xFFFFFFFFFFFF)
			if _, err := r.Discard(size); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*perOp)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(processCPUTime()-cpu0)/float64(b.N*perOp), "cpu-ns/record")
}

// processCPUTime is the process's user+system CPU time. The replaying
// reader shares the process, so this slightly overstates the server's cost.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkServerOnlyBatchOperate1000 replays the client's BatchOperate of
// 1000 sink-shaped writes (value bin + positions map entry).
func BenchmarkServerOnlyBatchOperate1000(b *testing.B) {
	bufs := recordClient(b, func(c *as.Client) {
		rows := make([]as.BatchRecordIfc, 1000)
		for i := range rows {
			k, _ := as.NewKey("test", "bench", i)
			rows[i] = as.NewBatchWrite(nil, k,
				as.PutOp(as.NewBin("value", "payload-0123456789-0123456789-0123456789")),
				as.MapPutOp(as.DefaultMapPolicy(), "pos", "orders-3", i))
		}
		if err := c.BatchOperate(nil, rows); err != nil {
			b.Fatal(err)
		}
	}, false)
	serverBench(b, largestMsgFrame(b, bufs), 1000, true)
}

// BenchmarkServerOnlyPutPipelined replays 100 single-record puts back to
// back on one connection.
func BenchmarkServerOnlyPutPipelined(b *testing.B) {
	bufs := recordClient(b, func(c *as.Client) {
		for i := 0; i < 100; i++ {
			k, _ := as.NewKey("test", "bench", i)
			if err := c.Put(nil, k, as.BinMap{"v": 1, "s": "payload-0123456789"}); err != nil {
				b.Fatal(err)
			}
		}
	}, false)
	var frames []byte
	for _, data := range bufs {
		for _, fr := range splitFrames(data) {
			if fr[1] == protoMsg {
				frames = append(frames, fr...)
			}
		}
	}
	serverBench(b, frames, 100, false)
}
