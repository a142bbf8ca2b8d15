package aerofake

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Config configures a Server. The zero value serves namespace "test" on a
// random loopback port.
type Config struct {
	// Addr is the TCP address to listen on; default "127.0.0.1:0".
	Addr string
	// Namespaces lists the namespaces to serve; default one namespace "test".
	Namespaces []NamespaceConfig
	// ClusterName is answered to the cluster-name info command; the real
	// server answers "null" when it is unset.
	ClusterName string
	// NodeName is the node id answered to the node info command; default a
	// random id in the real server's format (uppercase hex).
	NodeName string
	// MaxMessageSize caps an AS_MSG frame's declared size; larger frames
	// close the connection. Default 128 MiB, the real server's limit.
	MaxMessageSize int
	// MaxRecordSize is the namespace's max-record-size: a write that makes
	// a record's stored size (computed as CE 8.1 does, see record.size)
	// larger fails with RECORD_TOO_BIG. Default 1 MiB, the real server's
	// default; like the real one it takes 64 bytes to 8 MiB.
	MaxRecordSize int
	// EnterpriseSecurity, when set, makes the server answer logins as an
	// Aerospike Enterprise server with security enabled. Unset, it answers
	// as Community Edition does: every security command, a login included,
	// gets SECURITY_NOT_SUPPORTED (51), so a client configured with a user
	// and password fails to connect.
	EnterpriseSecurity *Security
	// StatsInfo enables the non-standard "stats" info command, which answers
	// the server's operation counters as k=v pairs.
	StatsInfo bool
	// Now returns the current time; default time.Now. Tests use it to move
	// time forward and watch records expire.
	Now func() time.Time
	// Logger receives connection-level problems (malformed frames, drops);
	// default discards.
	Logger *slog.Logger
}

// NamespaceConfig configures one namespace.
type NamespaceConfig struct {
	// Name is the namespace name (1 to 31 bytes).
	Name string
	// AllowTTL lets writes set a positive TTL, as a namespace with
	// nsup-period > 0 or allow-ttl-without-nsup does. A stock namespace
	// refuses them with FAIL_FORBIDDEN.
	AllowTTL bool
	// DefaultTTL is the namespace default-ttl applied to writes with TTL 0;
	// 0 means records never expire. A non-zero value requires AllowTTL, as
	// the real server refuses to start otherwise.
	DefaultTTL time.Duration
}

const (
	defaultMaxMessageSize = 128 << 20
	defaultMaxRecordSize  = 1 << 20
	minMaxRecordSize      = 64      // MIN_MAX_RECORD_SIZE
	maxMaxRecordSize      = 8 << 20 // WBLOCK_SZ: no record is larger
	maxInfoSize           = 1 << 20
	maxAdminSize          = 64 << 10
	// frameTarget is the size at which multi-record replies start a new
	// proto frame; the client refuses frames above 10 MiB.
	frameTarget = 128 << 10
)

// Server is a running in-memory Aerospike node. All methods are safe for
// concurrent use.
type Server struct {
	cfg        Config
	ln         net.Listener
	namespaces map[string]*namespace
	nsOrder    []string
	node       string
	replicas   string
	log        *slog.Logger

	faults faultSet
	stats  counters
	sec    *security // nil: Community Edition

	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
	done   chan struct{} // closed by Close; interrupts injected delays
	wg     sync.WaitGroup
}

// Start validates cfg, listens on cfg.Addr and serves until Close. ctx bounds
// only the listen call.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	s, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("aerofake: listen on %s: %w", s.cfg.Addr, err)
	}
	s.ln = ln
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// newServer builds a Server without a listener (the fuzz test drives
// connections directly).
func newServer(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if len(cfg.Namespaces) == 0 {
		cfg.Namespaces = []NamespaceConfig{{Name: "test"}}
	}
	if cfg.MaxMessageSize <= 0 {
		cfg.MaxMessageSize = defaultMaxMessageSize
	}
	if cfg.MaxRecordSize <= 0 {
		cfg.MaxRecordSize = defaultMaxRecordSize
	}
	if cfg.MaxRecordSize < minMaxRecordSize || cfg.MaxRecordSize > maxMaxRecordSize {
		return nil, fmt.Errorf("aerofake: MaxRecordSize %d out of the server's range [%d, %d]", cfg.MaxRecordSize, minMaxRecordSize, maxMaxRecordSize)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.NodeName == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		cfg.NodeName = fmt.Sprintf("BB9%012X", b[:])
	}
	s := &Server{
		cfg:        cfg,
		namespaces: make(map[string]*namespace, len(cfg.Namespaces)),
		node:       cfg.NodeName,
		log:        cfg.Logger.With("component", "aerofake"),
		conns:      make(map[*conn]struct{}),
		done:       make(chan struct{}),
	}
	for _, nc := range cfg.Namespaces {
		if err := validateNamespace(nc); err != nil {
			return nil, err
		}
		if _, dup := s.namespaces[nc.Name]; dup {
			return nil, fmt.Errorf("aerofake: namespace %q configured twice", nc.Name)
		}
		s.namespaces[nc.Name] = newNamespace(nc)
		s.nsOrder = append(s.nsOrder, nc.Name)
	}
	s.replicas = replicasValue(s.nsOrder)
	if cfg.EnterpriseSecurity != nil {
		sec, err := newSecurity(cfg.EnterpriseSecurity)
		if err != nil {
			return nil, err
		}
		s.sec = sec
	}
	return s, nil
}

func validateNamespace(nc NamespaceConfig) error {
	if nc.Name == "" || len(nc.Name) > 31 || strings.ContainsAny(nc.Name, ":;,\t\n=") {
		return fmt.Errorf("aerofake: invalid namespace name %q (1-31 bytes, no separators)", nc.Name)
	}
	if nc.DefaultTTL < 0 || nc.DefaultTTL > maxTTLSeconds*time.Second {
		return fmt.Errorf("aerofake: namespace %q: default TTL %s out of range", nc.Name, nc.DefaultTTL)
	}
	if nc.DefaultTTL > 0 && !nc.AllowTTL {
		return fmt.Errorf("aerofake: namespace %q: a default TTL needs AllowTTL (the real server refuses default-ttl without nsup-period or allow-ttl-without-nsup)", nc.Name)
	}
	return nil
}

// Addr returns the address the server listens on, e.g. "127.0.0.1:3000".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Host returns the listening IP and port separately, as the client's
// NewHost wants them.
func (s *Server) Host() (string, int) {
	a := s.ln.Addr().(*net.TCPAddr)
	return a.IP.String(), a.Port
}

// Close stops accepting, closes every client connection and waits for the
// connection goroutines to finish. It is safe to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	var err error
	if s.ln != nil {
		err = s.ln.Close()
	}
	for c := range s.conns {
		_ = c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// DropConnections closes every open client connection, as a server restart
// or a network cut would, and returns how many it closed. The server keeps
// accepting new connections.
func (s *Server) DropConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		_ = c.nc.Close()
	}
	return len(s.conns)
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	var backoff time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Temporary errors (e.g. EMFILE): back off instead of spinning.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed", "err", err, "backoff", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		c := newConn(s, nc, nc)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		s.stats.connectionsOpened.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				// Defence in depth for the long-running CLI server: a bug must
				// cost one connection, not the process. Tests and the fuzz
				// target fail on any recorded panic.
				if p := recover(); p != nil {
					s.stats.panics.Add(1)
					s.log.Error("connection handler panicked", "panic", p, "stack", string(debug.Stack()))
					_ = nc.Close()
					s.mu.Lock()
					delete(s.conns, c)
					s.mu.Unlock()
					s.stats.connectionsClosed.Add(1)
				}
			}()
			err := c.serve()
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, errDropped) {
				s.log.Debug("connection closed", "remote", nc.RemoteAddr().String(), "err", err)
			}
			_ = nc.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			s.stats.connectionsClosed.Add(1)
		}()
	}
}

// errDropped ends a connection on purpose (fault injection).
var errDropped = errors.New("aerofake: connection dropped by fault injection")

// errProtocol ends a connection whose framing cannot be trusted any more.
type errProtocol struct{ msg string }

func (e *errProtocol) Error() string { return "aerofake: " + e.msg }

// conn is one client connection. Requests are handled strictly in order, so
// pipelined commands are answered in the order they were sent.
type conn struct {
	s  *Server
	nc net.Conn // nil when serving a plain stream (fuzzing)
	r  *bufio.Reader
	w  *bufio.Writer

	body []byte
	out  []byte
	msg  message
	req  request
	rep  reply

	batch batchState
	scan  []digestRecord
}

func newConn(s *Server, nc net.Conn, rw io.ReadWriter) *conn {
	return &conn{
		s:  s,
		nc: nc,
		r:  bufio.NewReaderSize(rw, 64<<10),
		w:  bufio.NewWriterSize(rw, 64<<10),
	}
}

// serve handles frames until the peer goes away or a frame cannot be
// trusted. It never panics on client input.
func (c *conn) serve() error {
	var hdr [protoHeaderSize]byte
	for {
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			return err
		}
		v := binary.BigEndian.Uint64(hdr[:])
		version, typ, size := byte(v>>56), byte(v>>48), v&0xFFFFFFFFFFFF
		if version != protoVersion {
			c.s.stats.malformed.Add(1)
			return &errProtocol{fmt.Sprintf("proto version %d, want %d", version, protoVersion)}
		}
		limit := uint64(c.s.cfg.MaxMessageSize)
		switch typ {
		case protoInfo:
			limit = maxInfoSize
		case protoAdmin:
			limit = maxAdminSize
		case protoMsg, protoCompressed:
		default:
			c.s.stats.malformed.Add(1)
			return &errProtocol{fmt.Sprintf("unknown proto type %d", typ)}
		}
		if size > limit {
			c.s.stats.malformed.Add(1)
			return &errProtocol{fmt.Sprintf("proto type %d frame of %d bytes exceeds the %d byte cap", typ, size, limit)}
		}
		body, err := c.readBody(int(size))
		if err != nil {
			return err
		}
		switch typ {
		case protoInfo:
			err = c.handleInfo(body)
		case protoAdmin:
			err = c.handleAdmin(body)
		case protoCompressed:
			// CE cannot decompress requests and answers ENTERPRISE_ONLY.
			c.s.stats.errors.Add(1)
			err = c.writeSingle(EnterpriseOnly, 0, 0, nil)
		default:
			err = c.handleMsg(body)
		}
		if err != nil {
			if errors.Is(err, errDropped) {
				// Answers to earlier pipelined commands still go out; only
				// the faulted command is lost.
				_ = c.w.Flush()
			}
			return err
		}
		// Flush once the pipeline is drained, so back-to-back commands share
		// a write.
		if c.r.Buffered() == 0 {
			if err := c.w.Flush(); err != nil {
				return err
			}
		}
		if cap(c.body) > 4<<20 {
			c.body = nil // do not pin a huge buffer to an idle connection
		}
	}
}

// readBody reads a frame body of size bytes. Large bodies grow with the data
// actually received, so a lying size field cannot make the server allocate
// the whole cap up front.
func (c *conn) readBody(size int) ([]byte, error) {
	const chunk = 1 << 20
	if size <= chunk {
		if cap(c.body) < size {
			c.body = make([]byte, size, max(size, 4096))
		}
		c.body = c.body[:size]
		_, err := io.ReadFull(c.r, c.body)
		return c.body, err
	}
	buf := c.body[:0]
	for len(buf) < size {
		n := min(size-len(buf), chunk)
		if cap(buf)-len(buf) < n {
			nb := make([]byte, len(buf), len(buf)+max(n, len(buf)))
			copy(nb, buf)
			buf = nb
		}
		if _, err := io.ReadFull(c.r, buf[len(buf):len(buf)+n]); err != nil {
			return nil, err
		}
		buf = buf[:len(buf)+n]
	}
	c.body = buf
	return buf, nil
}

func (c *conn) handleAdmin(body []byte) error {
	c.s.stats.admin.Add(1)
	// Community Edition answers every security command with
	// SECURITY_NOT_SUPPORTED and no fields (security_ce.c).
	rc, fields := SecurityNotSupported, []adminField(nil)
	if c.s.sec != nil {
		rc, fields = c.s.sec.answer(body)
	}
	out := appendProtoHeader(c.out[:0], protoAdmin, 0)
	out = append(out, 0, byte(rc), 0, byte(len(fields)))
	out = append(out, make([]byte, adminHeaderSize-4)...)
	for _, f := range fields {
		out = binary.BigEndian.AppendUint32(out, uint32(len(f.data)+1))
		out = append(out, f.id)
		out = append(out, f.data...)
	}
	putProtoSize(out, 0, protoAdmin)
	c.out = out
	_, err := c.w.Write(out)
	return err
}

// writeSingle writes a header-only AS_MSG reply (30 bytes), the exact shape
// the client needs for errors: trailing bytes would corrupt its next command.
func (c *conn) writeSingle(rc ResultCode, gen, voidTime uint32, ops []opResult) error {
	out := appendProtoHeader(c.out[:0], protoMsg, 0)
	out = appendMsgHeader(out, 0, 0, rc, gen, voidTime, 0, 0, len(ops))
	for i := range ops {
		out = appendOpResult(out, &ops[i])
	}
	putProtoSize(out, 0, protoMsg)
	c.out = out
	_, err := c.w.Write(out)
	return err
}

// handleMsg dispatches one AS_MSG.
func (c *conn) handleMsg(body []byte) error {
	m := &c.msg
	if err := parseMessage(body, m); err != nil {
		c.s.stats.malformed.Add(1)
		c.s.stats.errors.Add(1)
		c.s.log.Debug("malformed message", "err", err)
		return c.writeSingle(ParameterError, 0, 0, nil)
	}
	if _, ok := m.field(fieldBatchIndex); ok {
		return c.handleBatch(m, fieldBatchIndex)
	}
	if _, ok := m.field(fieldBatchIndexSet); ok {
		return c.handleBatch(m, fieldBatchIndexSet)
	}
	if _, ok := m.field(fieldDigest); !ok && m.info1&info1Batch == 0 {
		if _, hasNS := m.field(fieldNamespace); hasNS {
			return c.handleScan(m)
		}
	}
	return c.handleSingle(m)
}

func (c *conn) handleSingle(m *message) error {
	req := &c.req
	*req = request{
		info1: m.info1, info2: m.info2, info3: m.info3,
		gen: m.generation, ttl: m.ttl, ops: m.ops,
	}
	fieldsToRequest(m.fields, req, false)
	kind := req.kind()
	act := c.s.faults.match(kind, req.ns)
	if act != nil {
		if err := c.applyBefore(act); err != nil {
			return err
		}
		if act.rc != 0 && !act.afterApply {
			c.s.stats.count(kind, act.rc)
			return c.writeSingle(act.rc, 0, 0, nil)
		}
	}
	now := c.s.now()
	c.s.execute(req, now, &c.rep)
	c.s.stats.count(kind, c.rep.rc)
	if act != nil && act.afterApply {
		if act.drop {
			return errDropped
		}
		if act.rc != 0 {
			return c.writeSingle(act.rc, 0, 0, nil)
		}
	}
	rep := &c.rep
	if rep.rc != OK {
		return c.writeSingle(rep.rc, 0, 0, nil)
	}
	return c.writeSingle(OK, rep.gen, rep.voidTime, rep.ops)
}

// applyBefore carries out the part of a fault that happens before the
// command runs: the delay and, unless the fault is after-apply, the drop.
func (c *conn) applyBefore(act *faultAction) error {
	if act.delay > 0 {
		if err := c.w.Flush(); err != nil {
			return err
		}
		timer := time.NewTimer(act.delay)
		select {
		case <-timer.C:
		case <-c.s.done:
			timer.Stop()
			return net.ErrClosed
		}
	}
	if act.drop && !act.afterApply {
		return errDropped
	}
	return nil
}

func (s *Server) now() clock {
	t := s.cfg.Now()
	sec := t.Unix() - citrusleafEpoch
	if sec < 0 {
		sec = 0
	}
	return clock{nanos: t.UnixNano(), cl: uint32(sec)}
}
