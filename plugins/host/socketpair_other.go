//go:build !unix

package host

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// socketpair is unsupported here, and so are plugins: their task streams
// need the data channel.
func socketpair() (hostEnd, pluginEnd *os.File, err error) {
	return nil, nil, fmt.Errorf("plugins need socketpair(2), which %s lacks: %w", runtime.GOOS, errors.ErrUnsupported)
}
