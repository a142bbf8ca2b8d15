// Package syncbuf provides Buffer, a byte buffer that goroutines may write
// and read at the same time. Tests and the chaos suite use it to capture
// logs and child-process output that other goroutines are still writing.
//
// It owns nothing else: no line splitting, no waiting for content (callers
// poll String with their own deadline).
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer guarded by a mutex. The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns a copy of everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
