package datachan

import "sync"

// Tuning of the bulk buffer pool.
const (
	// poolBuffers is how many released buffers a channel keeps: a few
	// batches per stream in flight (credits) and a task or two per
	// plugin process.
	poolBuffers = 8
	// poolKeep is the largest buffer kept: a batch is bounded by the byte
	// budget (4 MiB by default); one 16 MiB record's buffer is not kept.
	poolKeep = 8 << 20
)

// bufPool recycles the bulk buffers that receivers hand back with
// Conn.Release. A buffer is handed out again only after its receiver
// released it, so reuse is explicit: a receiver that never releases gets a
// fresh buffer for every frame, as without the pool. Reused buffers are not
// zeroed: the frame reader overwrites exactly the bytes it returns.
type bufPool struct {
	mu   sync.Mutex
	free [][]byte
}

// get returns a buffer of length n: a released one that is large enough,
// else a new one.
func (p *bufPool) get(n int) []byte {
	p.mu.Lock()
	for i := len(p.free) - 1; i >= 0; i-- {
		if b := p.free[i]; cap(b) >= n {
			last := len(p.free) - 1
			p.free[i] = p.free[last]
			p.free[last] = nil
			p.free = p.free[:last]
			p.mu.Unlock()
			return b[:n]
		}
	}
	p.mu.Unlock()
	return make([]byte, n)
}

// put keeps b for a later get, unless the pool is full or b is too large;
// then the smallest kept buffer makes room for a larger one.
func (p *bufPool) put(b []byte) {
	if cap(b) == 0 || cap(b) > poolKeep {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < poolBuffers {
		p.free = append(p.free, b[:0])
		return
	}
	small := 0
	for i := range p.free {
		if cap(p.free[i]) < cap(p.free[small]) {
			small = i
		}
	}
	if cap(p.free[small]) < cap(b) {
		p.free[small] = b[:0]
	}
}
