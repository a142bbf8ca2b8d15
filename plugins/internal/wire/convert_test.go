package wire

import (
	"errors"
	"fmt"
	"testing"

	"github.com/connectd/connectd/framework/sdk"
)

// TestErrorRoundTrip: an error crossing the boundary keeps its message
// and retriability, and a retriable one is not marked twice
// ("retriable: retriable: ...").
func TestErrorRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		err       error
		msg       string
		retriable bool
	}{
		{errors.New("target rejected the batch"), "target rejected the batch", false},
		{sdk.Retriable(errors.New("target busy")), "retriable: target busy", true},
		{fmt.Errorf("put: %w", sdk.Retriable(errors.New("target busy"))), "put: retriable: target busy", true},
		{fmt.Errorf("wrapped again: %w", ErrorFromPB(ErrorToPB(sdk.Retriable(errors.New("busy"))))), "wrapped again: retriable: busy", true},
		{errors.New("retriable: only a word in the text"), "retriable: only a word in the text", false},
	} {
		got := ErrorFromPB(ErrorToPB(tc.err))
		if got.Error() != tc.msg || sdk.IsRetriable(got) != tc.retriable {
			t.Errorf("%q crossed as %q (retriable %v), want %q (retriable %v)", tc.err, got, sdk.IsRetriable(got), tc.msg, tc.retriable)
		}
		var re *RemoteError
		if !errors.As(got, &re) {
			t.Errorf("%q: no *RemoteError", got)
		}
	}
	if ErrorFromPB(ErrorToPB(nil)) != nil {
		t.Error("nil crossed as an error")
	}
}
