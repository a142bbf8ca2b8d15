package plugins

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"google.golang.org/grpc/status"

	"github.com/connectd/connectd/plugins/internal/datachan"
	"github.com/connectd/connectd/plugins/internal/wire"
)

// startData opens the plugin's end of the data channel (protocol version
// 2): the socketpair end the host passed as an inherited file descriptor.
// Task streams the host opens on it are served like the gRPC ones.
func (s *server) startData(getenv func(string) string) error {
	v := getenv(wire.EnvDataFD)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return fmt.Errorf("protocol version %d was negotiated but %s is %q, not an inherited file descriptor", wire.ProtocolV4, wire.EnvDataFD, v)
	}
	// Processes the connector starts must not take the variable for theirs.
	os.Unsetenv(wire.EnvDataFD)
	f := os.NewFile(uintptr(fd), "connectd-data")
	if f == nil {
		return fmt.Errorf("data channel: file descriptor %d is not valid", fd)
	}
	// FileConn duplicates the descriptor with close-on-exec; closing the
	// inherited one keeps the channel out of any process the connector
	// starts.
	nc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("data channel: file descriptor %d: %w", fd, err)
	}
	if uc, ok := nc.(*net.UnixConn); ok {
		_ = uc.SetWriteBuffer(wire.SocketBufferBytes)
		_ = uc.SetReadBuffer(wire.SocketBufferBytes)
	}
	c, err := datachan.New(nc, datachan.Options{
		Role: datachan.Plugin, MaxBody: s.maxMsg, WriteTimeout: wire.PluginWriteTimeout,
		Decode: wire.DecodeForPlugin, Accept: s.serveData,
		OnFail: func(err error) {
			// Only the worker holds the other end (close-on-exec): when it
			// is closed the worker is gone, and the plugin must not
			// outlive it. This is how the plugin notices without polling.
			if errors.Is(err, datachan.ErrPeerClosed) && s.stopCtx.Err() == nil {
				s.log.Error("host process is gone (data channel closed); exiting", "error", err)
				os.Exit(3)
			}
			if errors.Is(err, datachan.ErrProtocol) || errors.Is(err, datachan.ErrTimeout) {
				s.log.Error("data channel failed; its tasks stop", "error", err)
				return
			}
			s.log.Debug("data channel closed", "error", err)
		},
	})
	if err != nil {
		nc.Close()
		return fmt.Errorf("data channel: %w", err)
	}
	s.mu.Lock()
	s.data = c
	s.mu.Unlock()
	return nil
}

// serveData serves one task stream of the data channel and ends it with
// the task's outcome.
func (s *server) serveData(kind byte, st *datachan.Stream) {
	var err error
	switch kind {
	case wire.KindSource:
		err = s.sourceTask(wire.NewSourceServer(st))
	case wire.KindSink:
		err = s.sinkTask(wire.NewSinkServer(st))
	default:
		err = fmt.Errorf("unknown task stream kind %d", kind)
	}
	if sterr, ok := status.FromError(err); ok && err != nil {
		err = errors.New(sterr.Message())
	}
	st.End(err)
}
