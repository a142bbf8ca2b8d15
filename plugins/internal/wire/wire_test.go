package wire

import (
	"testing"
	"time"
)

// TestSpinWaitFromEnv: the plugin polls as long as the host says, and
// falls back to the default for what the host would never send.
func TestSpinWaitFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want time.Duration
	}{
		{"", DefaultSpinWait},
		{"0", 0},
		{"200", 200 * time.Microsecond},
		{"-3", DefaultSpinWait},
		{"fast", DefaultSpinWait},
	} {
		get := func(k string) string {
			if k == EnvSpinWait {
				return tc.env
			}
			return ""
		}
		if got := SpinWaitFromEnv(get); got != tc.want {
			t.Errorf("%s=%q: %v, want %v", EnvSpinWait, tc.env, got, tc.want)
		}
	}
}
