package datachan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A frame is a 13-byte header followed by its body, meta then bulk:
//
//	0:4   body length (meta + bulk), uint32 little-endian
//	4:8   stream id, uint32 little-endian (0: the channel itself)
//	8     type
//	9:13  meta length, uint32 little-endian (at most the body length)
//
// Meta is small and structured (a protobuf message, a stream kind, an
// error text); bulk is opaque payload that the receiver keeps without
// copying (packed records).
const HeaderSize = 13

// Frame types.
const (
	// TypeHello is the plugin's first frame, on stream 0; meta is Hello.
	TypeHello byte = 1
	// TypeOpen opens a stream (host to plugin); meta is one byte, the
	// stream's kind.
	TypeOpen byte = 2
	// TypeMsg carries one message of a stream.
	TypeMsg byte = 3
	// TypeEnd ends a stream (plugin to host); meta is an error text, empty
	// for a clean end.
	TypeEnd byte = 4
	// TypeReset abandons a stream (host to plugin): the host cancelled it
	// and reads nothing more from it.
	TypeReset byte = 5
)

// Hello is the meta of the hello frame: it names the protocol and its
// version, so a host never mistakes another program's bytes for frames.
var Hello = []byte("connectd-data/2")

// ErrProtocol marks bytes on the channel that break the framing or the
// stream rules: an oversized frame, an unknown type, a message for a stream
// that was never opened, a message that does not decode.
var ErrProtocol = errors.New("data channel protocol violation")

// Header is a decoded frame header.
type Header struct {
	Type    byte
	Stream  uint32
	MetaLen int
	BulkLen int
}

// AppendHeader appends a frame header.
func AppendHeader(dst []byte, typ byte, stream uint32, metaLen, bulkLen int) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(metaLen+bulkLen))
	dst = binary.LittleEndian.AppendUint32(dst, stream)
	dst = append(dst, typ)
	return binary.LittleEndian.AppendUint32(dst, uint32(metaLen))
}

// ParseHeader decodes and checks a frame header; maxBody is the largest
// body accepted.
func ParseHeader(b *[HeaderSize]byte, maxBody int) (Header, error) {
	body := binary.LittleEndian.Uint32(b[0:4])
	h := Header{
		Stream:  binary.LittleEndian.Uint32(b[4:8]),
		Type:    b[8],
		MetaLen: int(binary.LittleEndian.Uint32(b[9:13])),
	}
	if uint64(body) > uint64(maxBody) {
		return h, fmt.Errorf("%w: frame of %d bytes exceeds the limit of %d bytes", ErrProtocol, body, maxBody)
	}
	if uint64(h.MetaLen) > uint64(body) {
		return h, fmt.Errorf("%w: frame meta of %d bytes in a body of %d bytes", ErrProtocol, h.MetaLen, body)
	}
	h.BulkLen = int(body) - h.MetaLen
	if h.Type < TypeHello || h.Type > TypeReset {
		return h, fmt.Errorf("%w: unknown frame type %d", ErrProtocol, h.Type)
	}
	if (h.Stream == 0) != (h.Type == TypeHello) {
		return h, fmt.Errorf("%w: frame type %d on stream %d", ErrProtocol, h.Type, h.Stream)
	}
	if h.BulkLen > 0 && h.Type != TypeMsg {
		return h, fmt.Errorf("%w: frame type %d with %d bulk bytes", ErrProtocol, h.Type, h.BulkLen)
	}
	return h, nil
}

// Frame is one decoded frame. Meta is valid until the next call of
// FrameReader.Next; Bulk is the reader's to keep (freshly allocated, or
// from the reader's Alloc).
type Frame struct {
	Header
	Meta, Bulk []byte
}

// FrameReader reads frames from a byte stream, enforcing the body limit
// before allocating anything.
type FrameReader struct {
	r       io.Reader
	maxBody int
	hdr     [HeaderSize]byte
	meta    []byte // reused
	// Alloc, if set, returns the buffer for a frame's bulk of n bytes
	// (default: make). Next overwrites all n bytes.
	Alloc func(n int) []byte
}

// NewFrameReader reads frames of at most maxBody body bytes from r (give
// it a buffered reader: headers are read in small pieces).
func NewFrameReader(r io.Reader, maxBody int) *FrameReader {
	return &FrameReader{r: r, maxBody: maxBody}
}

// metaKeep is the largest meta buffer kept between frames.
const metaKeep = 1 << 20

// Next reads the next frame. Errors are io.EOF at a frame boundary,
// io.ErrUnexpectedEOF (or the reader's error) inside a frame, or
// ErrProtocol for a header that breaks the framing rules.
func (fr *FrameReader) Next() (Frame, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return Frame{}, err
	}
	h, err := ParseHeader(&fr.hdr, fr.maxBody)
	if err != nil {
		return Frame{}, err
	}
	if cap(fr.meta) > metaKeep && h.MetaLen <= metaKeep {
		fr.meta = nil // a large meta once must not pin its buffer forever
	}
	if cap(fr.meta) < h.MetaLen {
		fr.meta = make([]byte, h.MetaLen)
	}
	f := Frame{Header: h, Meta: fr.meta[:h.MetaLen]}
	if _, err := io.ReadFull(fr.r, f.Meta); err != nil {
		return Frame{}, unexpected(err)
	}
	if h.BulkLen > 0 {
		// The receiver's records alias it for as long as it keeps them: a
		// fresh buffer, or one its receiver released to Alloc's pool.
		if fr.Alloc != nil {
			f.Bulk = fr.Alloc(h.BulkLen)
		} else {
			f.Bulk = make([]byte, h.BulkLen)
		}
		if _, err := io.ReadFull(fr.r, f.Bulk); err != nil {
			return Frame{}, unexpected(err)
		}
	}
	return f, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
