//go:build !unix

package host

import (
	"errors"
	"os"
)

// socketpair is unsupported here: plugins speak protocol version 1.
func socketpair() (hostEnd, pluginEnd *os.File, err error) {
	return nil, nil, errors.ErrUnsupported
}
