package worker

import (
	"errors"
	"testing"

	"github.com/connectd/connectd/plugins/host"
)

// takeDirty must hand out each partition's latest offset once per change,
// in first-seen order, and keep what fn refused for the next call.
func TestOffsetSetDirty(t *testing.T) {
	s := newOffsetSet()
	set := func(p, o string) {
		t.Helper()
		if err := s.set([]byte(p), []byte(o)); err != nil {
			t.Fatal(err)
		}
	}
	take := func() []string {
		t.Helper()
		var got []string
		if err := s.takeDirty(func(o host.Offset) error {
			got = append(got, string(o.Partition)+"="+string(o.Offset))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	equal := func(step string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: got %q, want %q", step, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: got %q, want %q", step, got, want)
			}
		}
	}

	set(`{"p":1}`, `{"o":1}`)
	set(`{"p":2}`, `{"o":5}`)
	set(`{"p":1}`, `{"o":2}`)
	equal("first", take(), `{"p":1}={"o":2}`, `{"p":2}={"o":5}`)
	equal("nothing changed", take())

	set(`{"p":2}`, `{"o":6}`)
	equal("one changed", take(), `{"p":2}={"o":6}`)

	boom := errors.New("boom")
	set(`{"p":1}`, `{"o":3}`)
	set(`{"p":2}`, `{"o":7}`)
	n := 0
	err := s.takeDirty(func(host.Offset) error {
		if n++; n == 2 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("takeDirty error = %v, want %v", err, boom)
	}
	equal("after an error", take(), `{"p":2}={"o":7}`)

	s.markDirty()
	equal("marked dirty", take(), `{"p":1}={"o":3}`, `{"p":2}={"o":7}`)

	s.reset()
	equal("reset", take())
	set(`{"p":3}`, `{"o":1}`)
	equal("after reset", take(), `{"p":3}={"o":1}`)
}
