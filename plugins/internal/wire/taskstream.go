package wire

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/connectd/connectd/plugins/internal/datachan"
	"github.com/connectd/connectd/plugins/pluginpb"
)

// Task stream kinds on the data channel.
const (
	KindSource byte = 1
	KindSink   byte = 2
)

// On the data channel a task stream carries the task messages of
// plugins/pluginpb (SourceRequest, SourceResponse, SinkRequest,
// SinkResponse), one per frame, protobuf in the frame's meta. The packed
// records of a SourceBatch or SinkPut travel as the frame's bulk instead of
// inside the protobuf message: the sender writes them from its encoding
// buffer (no copy into a message) and the receiver's records are slices of
// the one buffer the frame was read into (no copy out of a message).

// DecodeForHost decodes a frame the host receives on a stream of kind.
func DecodeForHost(kind byte, meta, bulk []byte) (any, error) {
	switch kind {
	case KindSource:
		m := &pluginpb.SourceResponse{}
		if err := proto.Unmarshal(meta, m); err != nil {
			return nil, fmt.Errorf("malformed source response: %w", err)
		}
		if m.Msg == nil {
			return nil, errors.New("empty source response")
		}
		if len(bulk) > 0 {
			b := m.GetBatch()
			if b == nil || len(b.Records) > 0 {
				return nil, errors.New("records attached to a source response that is not a batch without inline records")
			}
			b.Records = bulk
		}
		return m, nil
	case KindSink:
		m := &pluginpb.SinkResponse{}
		if err := proto.Unmarshal(meta, m); err != nil {
			return nil, fmt.Errorf("malformed sink response: %w", err)
		}
		if m.Msg == nil {
			return nil, errors.New("empty sink response")
		}
		if len(bulk) > 0 {
			return nil, errors.New("records attached to a sink response")
		}
		return m, nil
	}
	return nil, fmt.Errorf("unknown stream kind %d", kind)
}

// DecodeForPlugin decodes a frame the plugin receives on a stream of kind.
func DecodeForPlugin(kind byte, meta, bulk []byte) (any, error) {
	switch kind {
	case KindSource:
		m := &pluginpb.SourceRequest{}
		if err := proto.Unmarshal(meta, m); err != nil {
			return nil, fmt.Errorf("malformed source request: %w", err)
		}
		if len(bulk) > 0 {
			return nil, errors.New("records attached to a source request")
		}
		return m, nil
	case KindSink:
		m := &pluginpb.SinkRequest{}
		if err := proto.Unmarshal(meta, m); err != nil {
			return nil, fmt.Errorf("malformed sink request: %w", err)
		}
		if len(bulk) > 0 {
			p := m.GetPut()
			if p == nil || len(p.Records) > 0 {
				return nil, errors.New("records attached to a sink request that is not a put without inline records")
			}
			p.Records = bulk
		}
		return m, nil
	}
	return nil, fmt.Errorf("unknown stream kind %d", kind)
}

// msgStream is the typed view of a data channel stream shared by the four
// stream adapters below.
type msgStream struct {
	s   *datachan.Stream
	mu  sync.Mutex
	buf []byte // reused marshalling buffer
}

// send marshals m (without its records, which go as bulk).
func (st *msgStream) send(m proto.Message, records *[]byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	var bulk []byte
	if records != nil {
		bulk, *records = *records, nil
		defer func() { *records = bulk }()
	}
	var err error
	st.buf, err = proto.MarshalOptions{}.MarshalAppend(st.buf[:0], m)
	defer func() { st.buf = st.buf[:0] }()
	if err != nil {
		return err
	}
	err = st.s.Send(st.buf, bulk)
	if cap(st.buf) > 1<<20 {
		st.buf = nil
	}
	return err
}

// SourceClient is the host's end of a source task stream.
type SourceClient struct{ msgStream }

// OpenSource opens a source task stream; cancelling ctx resets it.
func OpenSource(ctx context.Context, c *datachan.Conn) (*SourceClient, error) {
	s, err := c.Open(ctx, KindSource)
	if err != nil {
		return nil, err
	}
	return &SourceClient{msgStream{s: s}}, nil
}

func (c *SourceClient) Send(m *pluginpb.SourceRequest) error { return c.send(m, nil) }

// Await is datachan.Conn.Await of the stream's channel.
func (c *SourceClient) Await(ctx context.Context, deadline time.Time, done func() bool, wake <-chan struct{}) error {
	return c.s.Await(ctx, deadline, done, wake)
}

func (c *SourceClient) Recv() (*pluginpb.SourceResponse, error) {
	v, err := c.s.Recv()
	if err != nil {
		return nil, err
	}
	return v.(*pluginpb.SourceResponse), nil
}

// Handle hands later messages and the end to h on the channel's reading
// goroutine (datachan.Stream.Handle: h must not block).
func (c *SourceClient) Handle(h func(*pluginpb.SourceResponse, error)) {
	c.s.Handle(func(v any, err error) {
		m, _ := v.(*pluginpb.SourceResponse)
		h(m, err)
	})
}

// SinkClient is the host's end of a sink task stream.
type SinkClient struct{ msgStream }

// OpenSink opens a sink task stream; cancelling ctx resets it.
func OpenSink(ctx context.Context, c *datachan.Conn) (*SinkClient, error) {
	s, err := c.Open(ctx, KindSink)
	if err != nil {
		return nil, err
	}
	return &SinkClient{msgStream{s: s}}, nil
}

func (c *SinkClient) Send(m *pluginpb.SinkRequest) error {
	if p := m.GetPut(); p != nil {
		return c.send(m, &p.Records)
	}
	return c.send(m, nil)
}

// Await is datachan.Conn.Await of the stream's channel.
func (c *SinkClient) Await(ctx context.Context, deadline time.Time, done func() bool, wake <-chan struct{}) error {
	return c.s.Await(ctx, deadline, done, wake)
}

func (c *SinkClient) Recv() (*pluginpb.SinkResponse, error) {
	v, err := c.s.Recv()
	if err != nil {
		return nil, err
	}
	return v.(*pluginpb.SinkResponse), nil
}

// Handle hands later messages and the end to h on the channel's reading
// goroutine (datachan.Stream.Handle: h must not block).
func (c *SinkClient) Handle(h func(*pluginpb.SinkResponse, error)) {
	c.s.Handle(func(v any, err error) {
		m, _ := v.(*pluginpb.SinkResponse)
		h(m, err)
	})
}

// SourceServer is the plugin's end of a source task stream.
type SourceServer struct{ msgStream }

// NewSourceServer wraps a stream the host opened with KindSource.
func NewSourceServer(s *datachan.Stream) *SourceServer { return &SourceServer{msgStream{s: s}} }

func (c *SourceServer) Send(m *pluginpb.SourceResponse) error {
	if b := m.GetBatch(); b != nil {
		return c.send(m, &b.Records)
	}
	return c.send(m, nil)
}

func (c *SourceServer) Recv() (*pluginpb.SourceRequest, error) {
	v, err := c.s.Recv()
	if err != nil {
		return nil, err
	}
	return v.(*pluginpb.SourceRequest), nil
}

// Handle hands later messages and the end to h on the channel's reading
// goroutine (datachan.Stream.Handle: h must not block).
func (c *SourceServer) Handle(h func(*pluginpb.SourceRequest, error)) {
	c.s.Handle(func(v any, err error) {
		m, _ := v.(*pluginpb.SourceRequest)
		h(m, err)
	})
}

func (c *SourceServer) Context() context.Context { return c.s.Context() }

// SinkServer is the plugin's end of a sink task stream.
type SinkServer struct{ msgStream }

// NewSinkServer wraps a stream the host opened with KindSink.
func NewSinkServer(s *datachan.Stream) *SinkServer { return &SinkServer{msgStream{s: s}} }

func (c *SinkServer) Send(m *pluginpb.SinkResponse) error { return c.send(m, nil) }

// SendAll sends messages together, in one write when the channel is idle:
// a put's result and the credit that follows it cost the host one wake-up.
func (c *SinkServer) SendAll(ms ...*pluginpb.SinkResponse) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ends := make([]int, 0, len(ms))
	var err error
	for _, m := range ms {
		if c.buf, err = (proto.MarshalOptions{}).MarshalAppend(c.buf, m); err != nil {
			c.buf = c.buf[:0]
			return err
		}
		ends = append(ends, len(c.buf))
	}
	metas := make([][]byte, len(ms))
	start := 0
	for i, end := range ends {
		metas[i], start = c.buf[start:end], end
	}
	err = c.s.SendMetas(metas...)
	c.buf = c.buf[:0]
	return err
}

// Release hands back the records buffer of a received put once nothing
// refers to it (datachan.Conn.Release).
func (c *SinkServer) Release(records []byte) { c.s.Release(records) }

func (c *SinkServer) Recv() (*pluginpb.SinkRequest, error) {
	v, err := c.s.Recv()
	if err != nil {
		return nil, err
	}
	return v.(*pluginpb.SinkRequest), nil
}

// TryRecv is Recv without waiting: ok is false when nothing is queued and
// the stream has not ended (datachan.Stream.TryRecv).
func (c *SinkServer) TryRecv() (m *pluginpb.SinkRequest, ok bool, err error) {
	v, ok, err := c.s.TryRecv()
	if !ok {
		return nil, false, err
	}
	return v.(*pluginpb.SinkRequest), true, nil
}

// Wait returns once TryRecv has something to return or ctx is done,
// reading the channel on the calling goroutine while nobody else does
// (datachan.Stream.AwaitMessage).
func (c *SinkServer) Wait(ctx context.Context) { _ = c.s.AwaitMessage(ctx) }

func (c *SinkServer) Context() context.Context { return c.s.Context() }
