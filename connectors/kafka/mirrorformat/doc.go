// Package mirrorformat encodes and decodes the records MirrorMaker 2 keeps
// in its internal topics (offset syncs, checkpoints, heartbeats), byte for
// byte as MM2 4.1's classes in connect-mirror-client serialize them, so that
// MM2's own tools (RemoteClusterUtils, MirrorClient) read what connectd
// writes and connectd reads what MM2 wrote.
//
// MM2 serializes with Kafka's protocol Struct encoding: fields in schema
// order, INT16/INT32/INT64 big-endian, STRING as an INT16 byte length then
// UTF-8 bytes. Keys carry no version; checkpoint and heartbeat values start
// with an INT16 version header (0), offset-sync values have none (MM2's
// OffsetSync.serializeValue writes the bare struct).
//
// What it must not do: talk to Kafka, or know topic names (package
// replpolicy names the topics).
package mirrorformat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("malformed MirrorMaker 2 record")

// Version is the only value-schema version MM2 4.1 writes and reads.
const Version int16 = 0

func appendString(b []byte, s string) ([]byte, error) {
	if len(s) > math.MaxInt16 {
		return b, fmt.Errorf("string of %d bytes is longer than the protocol's %d", len(s), math.MaxInt16)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...), nil
}

// reader walks a buffer; the first short read or bad value sticks in err.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.fail("%s needs %d bytes, %d left", what, n, len(r.b))
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) int16(what string) int16 {
	if v := r.take(2, what); v != nil {
		return int16(binary.BigEndian.Uint16(v))
	}
	return 0
}

func (r *reader) int32(what string) int32 {
	if v := r.take(4, what); v != nil {
		return int32(binary.BigEndian.Uint32(v))
	}
	return 0
}

func (r *reader) int64(what string) int64 {
	if v := r.take(8, what); v != nil {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

func (r *reader) string(what string) string {
	n := r.int16(what + " length")
	if r.err != nil {
		return ""
	}
	if n < 0 {
		r.fail("%s is null (length %d)", what, n)
		return ""
	}
	v := r.take(int(n), what)
	if r.err == nil && !utf8.Valid(v) {
		r.fail("%s is not UTF-8", what)
	}
	return string(v)
}

// version reads and checks a value's version header.
func (r *reader) version() {
	if v := r.int16("version"); r.err == nil && v != Version {
		r.fail("unsupported version %d (MM2 4.1 writes %d)", v, Version)
	}
}

// done fails on trailing bytes: MM2 ignores them, but here they mean a
// record of another kind was read by mistake.
func (r *reader) done(what string) error {
	if r.err == nil && len(r.b) > 0 {
		r.fail("%d trailing bytes after the %s", len(r.b), what)
	}
	return r.err
}
