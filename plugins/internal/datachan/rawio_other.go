//go:build !linux

package datachan

import "net"

// rawSock is Linux only; elsewhere the channel uses net.Conn's calls.
type rawSock struct{}

func newRawSock(net.Conn) *rawSock { return nil }

func (*rawSock) Read([]byte) (int, error) { panic("datachan: rawSock used off Linux") }

func (*rawSock) writev([][]byte) error { panic("datachan: rawSock used off Linux") }
