package datachan

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// Tuning of the writer.
const (
	// copyMax is the largest meta or bulk part copied into the write
	// buffer; larger parts are written from the sender's memory (writev)
	// and the sender waits until they are out.
	copyMax = 32 << 10
	// maxQueued bounds the copied bytes waiting for a write: senders wait
	// beyond it, so a peer that reads slowly slows its senders down
	// instead of growing the buffer.
	maxQueued = 4 << 20
	// bufKeep is the largest write buffer kept between writes.
	bufKeep = 1 << 20
)

// writer is the single writer of a channel. There is no writer goroutine:
// the sender that finds the channel idle writes, and keeps writing what
// other senders queued meanwhile (flat combining), so small frames that
// arrive during a write go out together in the next writev, and an idle
// channel costs a send no goroutine hand-off.
type writer struct {
	nc      net.Conn
	raw     *rawSock // nil: write through nc
	timeout time.Duration

	mu      sync.Mutex
	cond    sync.Cond
	buf     []byte // frames being assembled: headers and copied parts
	refs    []ref  // parts written from the senders' memory, in order
	spare   []byte
	spRefs  []ref
	iov     net.Buffers
	writing bool
	gen     uint64 // number of the batch being assembled
	done    uint64 // last batch written
	err     error  // the channel failed; every send returns it
}

// ref is a part written from the sender's memory at offset at of buf.
type ref struct {
	at int
	b  []byte
}

func newWriter(nc net.Conn, timeout time.Duration) *writer {
	w := &writer{nc: nc, timeout: timeout, gen: 1}
	w.cond.L = &w.mu
	return w
}

// frame is one frame to send.
type frame struct {
	typ        byte
	stream     uint32
	meta, bulk []byte
}

// send queues frames (in order, in one write if the channel is idle) and,
// if the channel is idle, writes them. It returns once they are queued
// (parts up to copyMax are copied), or for larger parts once they are
// written. A write error is returned to the sender that wrote and to every
// later one; fatal reports whether this call caused it (the caller then
// fails the channel).
func (w *writer) send(frames ...frame) (err error, fatal bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.err == nil && len(w.buf) > maxQueued {
		w.cond.Wait()
	}
	if w.err != nil {
		return w.err, false
	}
	wait := false
	for i := range frames {
		f := &frames[i]
		w.buf = AppendHeader(w.buf, f.typ, f.stream, len(f.meta), len(f.bulk))
		wait = w.part(f.meta) || wait
		wait = w.part(f.bulk) || wait
	}
	mine := w.gen
	if w.writing {
		if !wait {
			return nil, false
		}
		for w.done < mine && w.err == nil {
			w.cond.Wait()
		}
		if w.done < mine {
			return w.err, false
		}
		return nil, false
	}
	w.writing = true
	for w.err == nil && len(w.buf) > 0 {
		buf, refs := w.buf, w.refs
		w.buf, w.refs = w.spare[:0], w.spRefs[:0]
		batch := w.gen
		w.gen++
		w.cond.Broadcast() // room for senders waiting on maxQueued
		w.mu.Unlock()
		werr := w.write(buf, refs)
		w.mu.Lock()
		clear(refs) // do not pin the senders' memory
		w.spRefs = refs[:0]
		if cap(buf) <= bufKeep {
			w.spare = buf[:0]
		} else {
			w.spare = nil
		}
		if werr != nil {
			w.err, fatal = werr, true
		} else {
			w.done = batch
		}
		w.cond.Broadcast()
	}
	w.writing = false
	if w.done >= mine {
		return nil, fatal
	}
	return w.err, fatal
}

// part queues b: copied if small, else referenced (and then the sender
// must wait for the write, which part reports).
func (w *writer) part(b []byte) (wait bool) {
	if len(b) > copyMax {
		w.refs = append(w.refs, ref{len(w.buf), b})
		return true
	}
	w.buf = append(w.buf, b...)
	return false
}

// write writes one batch with a single writev where the kernel allows.
// Each call gets the write timeout: a peer that reads nothing for that
// long is taken for hung.
func (w *writer) write(buf []byte, refs []ref) error {
	iov := w.iov[:0]
	prev := 0
	for _, r := range refs {
		if r.at > prev {
			iov = append(iov, buf[prev:r.at])
		}
		iov = append(iov, r.b)
		prev = r.at
	}
	if prev < len(buf) {
		iov = append(iov, buf[prev:])
	}
	w.iov = iov
	if w.timeout > 0 {
		_ = w.nc.SetWriteDeadline(time.Now().Add(w.timeout))
	}
	var err error
	if w.raw != nil {
		err = w.raw.writev(iov)
	} else {
		bufs := iov // WriteTo consumes its receiver
		_, err = bufs.WriteTo(w.nc)
	}
	clear(w.iov[:cap(w.iov)])
	if err == nil {
		return nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w: the peer read nothing for %s", ErrTimeout, w.timeout)
	}
	if errors.Is(err, net.ErrClosed) {
		return ErrClosed
	}
	return fmt.Errorf("%w: write: %v", ErrPeerClosed, err)
}

// fail makes every later send return err.
func (w *writer) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.cond.Broadcast()
	w.mu.Unlock()
}
