package datachan

import (
	"context"
	"encoding/binary"
	"io"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSend1KiB sends frames of 1000 length-prefixed values of 1 KiB
// to a peer that discards them, both ends in this process. One op is one
// value; cpu-ns/record counts both ends.
func BenchmarkSend1KiB(b *testing.B) {
	const perFrame, size = 1000, 1024
	values := make([][]byte, perFrame)
	for i := range values {
		values[i] = make([]byte, size)
	}
	a, raw := socketpair(b)
	raw.Write(encFrame(TypeHello, 0, Hello, nil))
	go io.Copy(io.Discard, raw)
	c, err := New(a, Options{Role: Host, MaxBody: 64 << 20, WriteTimeout: time.Minute, Decode: decode})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s, err := c.Open(context.Background(), 1)
	if err != nil {
		b.Fatal(err)
	}
	var buf []byte
	b.SetBytes(size)
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i += perFrame {
		buf = buf[:0]
		for _, v := range values {
			buf = binary.AppendUvarint(buf, uint64(len(v)))
			buf = append(buf, v...)
		}
		if err := s.Send([]byte("meta"), buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/record")
}

// cpuTime is this process's user and system CPU time (both ends of the
// channel run in it).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRecv1KiB receives frames of 1000 records of 1 KiB (each frame's
// bulk in a buffer of its own, as the host keeps a source batch), both ends
// in this process. One op is one record; cpu-ns/record counts both ends.
func BenchmarkRecv1KiB(b *testing.B) {
	const perFrame, size = 1000, 1024
	a, raw := socketpair(b)
	c, err := New(a, Options{Role: Host, MaxBody: 64 << 20, WriteTimeout: time.Minute, Decode: decode})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s, err := c.Open(context.Background(), 1)
	if err != nil {
		b.Fatal(err)
	}
	go io.Copy(io.Discard, raw) // the open frame
	frame := encFrame(TypeMsg, 1, []byte("meta"), make([]byte, perFrame*size))
	frames := b.N/perFrame + 1
	go func() {
		raw.Write(encFrame(TypeHello, 0, Hello, nil))
		for range frames {
			if _, err := raw.Write(frame); err != nil {
				return
			}
		}
	}()
	b.SetBytes(size)
	b.ResetTimer()
	start := cpuTime()
	for range frames {
		if _, err := s.Recv(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(frames*perFrame), "cpu-ns/record")
}
