package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

func TestConcurrentWritersAndReaders(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	const writers, lines = 4, 500
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range lines {
				if _, err := b.Write([]byte("line\n")); err != nil {
					t.Error(err)
				}
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "line\n"); n != writers*lines {
		t.Fatalf("%d lines, want %d", n, writers*lines)
	}
}
