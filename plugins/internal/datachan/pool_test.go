package datachan

import (
	"bytes"
	"testing"
)

// TestReleasedBulkIsReused: a frame read after its predecessor's bulk was
// released lands in the same memory, holds exactly its own bytes (a reused
// buffer is not zeroed, so stale bytes would show), and a bulk that was
// not released is never handed out again.
func TestReleasedBulkIsReused(t *testing.T) {
	big := bytes.Repeat([]byte{0xAA}, 64<<10)
	small := bytes.Repeat([]byte{0x55}, 1000)
	var stream []byte
	for _, bulk := range [][]byte{big, small, big, small} {
		stream = append(stream, encFrame(TypeMsg, 1, []byte("m"), bulk)...)
	}
	var p bufPool
	r := NewFrameReader(bytes.NewReader(stream), 1<<20)
	r.Alloc = p.get

	f1, err := r.Next()
	if err != nil || !bytes.Equal(f1.Bulk, big) {
		t.Fatalf("frame 1: %v", err)
	}
	p.put(f1.Bulk)
	f2, err := r.Next()
	if err != nil || !bytes.Equal(f2.Bulk, small) {
		t.Fatalf("frame 2: %v, %d bytes", err, len(f2.Bulk))
	}
	if &f2.Bulk[0] != &f1.Bulk[0] {
		t.Fatal("frame 2 was not read into the released buffer")
	}
	// f2 is kept (not released): frame 3 needs new memory.
	f3, err := r.Next()
	if err != nil || !bytes.Equal(f3.Bulk, big) {
		t.Fatalf("frame 3: %v", err)
	}
	if &f3.Bulk[0] == &f2.Bulk[0] {
		t.Fatal("frame 3 was read into a buffer still in use")
	}
	if !bytes.Equal(f2.Bulk, small) {
		t.Fatal("frame 2's bytes changed while it was in use")
	}
	p.put(f3.Bulk)
	p.put(f2.Bulk)
	f4, err := r.Next()
	if err != nil || !bytes.Equal(f4.Bulk, small) {
		t.Fatalf("frame 4: %v", err)
	}
}

// TestPoolBounds: the pool keeps at most poolBuffers buffers, prefers
// larger ones when full, and never keeps one above poolKeep.
func TestPoolBounds(t *testing.T) {
	var p bufPool
	p.put(make([]byte, poolKeep+1))
	if len(p.free) != 0 {
		t.Fatal("kept a buffer above poolKeep")
	}
	for i := range poolBuffers + 3 {
		p.put(make([]byte, 100*(i+1)))
	}
	if len(p.free) != poolBuffers {
		t.Fatalf("%d buffers kept, want %d", len(p.free), poolBuffers)
	}
	for _, b := range p.free {
		if cap(b) < 100*4 {
			t.Fatalf("kept a %d-byte buffer over larger ones", cap(b))
		}
	}
	if b := p.get(1 << 20); cap(b) != 1<<20 || len(p.free) != poolBuffers {
		t.Fatal("a request larger than every kept buffer must allocate and keep the pool")
	}
}
