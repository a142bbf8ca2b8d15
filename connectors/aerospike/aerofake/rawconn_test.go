package aerofake_test

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

// rawConn speaks the wire protocol by hand, for inputs the real client never
// produces (malformed frames, forbidden flag combinations).
type rawConn struct {
	t testing.TB
	c net.Conn
}

func dialRaw(t testing.TB, srv *aerofake.Server) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", srv.Addr(), err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{t: t, c: c}
}

func (r *rawConn) send(b []byte) {
	r.t.Helper()
	_ = r.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// readFrame reads one proto frame.
func (r *rawConn) readFrame() (typ byte, body []byte, err error) {
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var hdr [8]byte
	if _, err := io.ReadFull(r.c, hdr[:]); err != nil {
		return 0, nil, err
	}
	v := binary.BigEndian.Uint64(hdr[:])
	if byte(v>>56) != 2 {
		return 0, nil, errors.New("bad reply version")
	}
	body = make([]byte, v&0xFFFFFFFFFFFF)
	if _, err := io.ReadFull(r.c, body); err != nil {
		return 0, nil, err
	}
	return byte(v >> 48), body, nil
}

// mustReply reads one AS_MSG reply and returns its result code and full
// length (proto header included).
func (r *rawConn) mustReply() (rc byte, total int, body []byte) {
	r.t.Helper()
	typ, body, err := r.readFrame()
	if err != nil {
		r.t.Fatalf("read reply: %v", err)
	}
	if typ != 3 {
		r.t.Fatalf("reply proto type %d, want 3", typ)
	}
	if len(body) < 22 {
		r.t.Fatalf("reply of %d bytes is shorter than a message header", len(body))
	}
	return body[5], 8 + len(body), body
}

// expectClosed asserts the server closed the connection.
func (r *rawConn) expectClosed() {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, err := r.c.Read(buf)
	if err == nil {
		r.t.Fatalf("connection still open; read %d bytes: %x", n, buf[:n])
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		r.t.Fatalf("connection not closed within 5s")
	}
}

func frame(typ byte, body []byte) []byte {
	out := binary.BigEndian.AppendUint64(nil, uint64(2)<<56|uint64(typ)<<48|uint64(len(body)))
	return append(out, body...)
}

func fieldBytes(typ byte, data []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(data)+1))
	out = append(out, typ)
	return append(out, data...)
}

func opBytes(code, ptype byte, name string, value []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(4+len(name)+len(value)))
	out = append(out, code, ptype, 0, byte(len(name)))
	out = append(out, name...)
	return append(out, value...)
}

// msgBody builds an AS_MSG body.
func msgBody(info1, info2, info3 byte, gen, ttl uint32, fields, ops [][]byte) []byte {
	b := []byte{22, info1, info2, info3, 0, 0}
	b = binary.BigEndian.AppendUint32(b, gen)
	b = binary.BigEndian.AppendUint32(b, ttl)
	b = binary.BigEndian.AppendUint32(b, 1000)
	b = binary.BigEndian.AppendUint16(b, uint16(len(fields)))
	b = binary.BigEndian.AppendUint16(b, uint16(len(ops)))
	for _, f := range fields {
		b = append(b, f...)
	}
	for _, o := range ops {
		b = append(b, o...)
	}
	return b
}

// keyFields returns namespace, set and digest fields for (ns, set, key).
func keyFields(t testing.TB, ns, set string, key any) [][]byte {
	t.Helper()
	d, err := aerofake.Digest(set, key)
	if err != nil {
		t.Fatal(err)
	}
	fs := [][]byte{fieldBytes(0, []byte(ns))}
	if set != "" {
		fs = append(fs, fieldBytes(1, []byte(set)))
	}
	return append(fs, fieldBytes(4, d[:]))
}

func int64Bytes(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
