//go:build unix

package host_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/connectd/connectd/plugins/internal/wire"
)

// envFloorChild makes the test binary the far end of
// BenchmarkBoundaryFloor: it answers every length-prefixed batch on file
// descriptor 3 with 16 bytes.
const envFloorChild = "CONNECTD_TEST_FLOOR_CHILD"

// BenchmarkBoundaryFloor is the floor under BenchmarkBoundary's sink/plugin
// rows: the same bytes (batches of 1 KiB records in their packed size) in
// one write to a child process over a socketpair with the data channel's
// socket buffers, and 16 bytes back, one round trip at a time, one
// goroutine on each side blocking in the socket (Go's netpoller, as the
// data channel). No framing beyond a length prefix, no protobuf, no
// decoding, no task: what any one-batch-at-a-time boundary between two Go
// processes pays on this machine. One op is one record.
func BenchmarkBoundaryFloor(b *testing.B) {
	for _, batch := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			rec := wire.RecordSize(&sinkBatch(1, 1024)[0])
			hostEnd, childEnd := socketpairFiles(b)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envFloorChild+"=1")
			cmd.ExtraFiles = []*os.File{childEnd}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			childEnd.Close()
			nc, err := net.FileConn(hostEnd)
			hostEnd.Close()
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				nc.Close()
				_ = cmd.Wait()
			}()
			tune(nc)
			msg := make([]byte, 4+batch*rec)
			binary.LittleEndian.PutUint32(msg, uint32(batch*rec))
			var ack [16]byte
			b.SetBytes(1024)
			b.ResetTimer()
			cpu := startCPU(cmd.Process.Pid)
			for i := 0; i < b.N; i += batch {
				if _, err := nc.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(nc, ack[:]); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
		})
	}
}

// floorChild serves BenchmarkBoundaryFloor's round trips until the host
// closes the socket.
func floorChild() int {
	f := os.NewFile(3, "floor")
	nc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tune(nc)
	var hdr [4]byte
	ack := make([]byte, 16)
	var buf []byte
	for {
		if _, err := io.ReadFull(nc, hdr[:]); err != nil {
			return 0
		}
		n := int(binary.LittleEndian.Uint32(hdr[:]))
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		if _, err := io.ReadFull(nc, buf[:n]); err != nil {
			return 0
		}
		if _, err := nc.Write(ack); err != nil {
			return 0
		}
	}
}

func tune(nc net.Conn) {
	if uc, ok := nc.(*net.UnixConn); ok {
		_ = uc.SetWriteBuffer(wire.SocketBufferBytes)
		_ = uc.SetReadBuffer(wire.SocketBufferBytes)
	}
}

func socketpairFiles(b *testing.B) (a, c *os.File) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "floor-host"), os.NewFile(uintptr(fds[1]), "floor-child")
}
