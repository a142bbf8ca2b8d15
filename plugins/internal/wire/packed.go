package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/connectd/connectd/framework/chain"
	"github.com/connectd/connectd/framework/sdk"
)

// The packed record format is documented in plugins/pluginpb/plugin.proto.

const (
	flagKeyNull   = 1
	flagValueNull = 2
	flagTimestamp = 4
)

// AppendRecord appends r in the packed format.
func AppendRecord(dst []byte, r *chain.Raw) []byte {
	var flags byte
	if r.Key == nil {
		flags |= flagKeyNull
	}
	if r.Value == nil {
		flags |= flagValueNull
	}
	if !r.Timestamp.IsZero() {
		flags |= flagTimestamp
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(len(r.Topic)))
	dst = append(dst, r.Topic...)
	dst = binary.AppendVarint(dst, int64(r.Partition))
	dst = binary.AppendVarint(dst, r.Offset)
	if r.Key != nil {
		dst = binary.AppendUvarint(dst, uint64(len(r.Key)))
		dst = append(dst, r.Key...)
	}
	if r.Value != nil {
		dst = binary.AppendUvarint(dst, uint64(len(r.Value)))
		dst = append(dst, r.Value...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(r.Headers)))
	for _, h := range r.Headers {
		dst = binary.AppendUvarint(dst, uint64(len(h.Key)))
		dst = append(dst, h.Key...)
		if h.Value == nil {
			dst = append(dst, 1)
			continue
		}
		dst = append(dst, 0)
		dst = binary.AppendUvarint(dst, uint64(len(h.Value)))
		dst = append(dst, h.Value...)
	}
	if flags&flagTimestamp != 0 {
		dst = binary.AppendVarint(dst, r.Timestamp.UnixNano())
	}
	return dst
}

// AppendSourceExtras appends what follows a source record.
func AppendSourceExtras(dst, partition, offset []byte, boundary byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(partition)))
	dst = append(dst, partition...)
	dst = binary.AppendUvarint(dst, uint64(len(offset)))
	dst = append(dst, offset...)
	return append(dst, boundary)
}

// Decoder reads packed records. Byte slices it returns alias the input;
// topic and header-key strings are interned, so a batch to one topic
// allocates its topic once.
type Decoder struct {
	buf     []byte
	strings map[string]string
	last    string // the last string returned: batches repeat one topic
}

// ErrMalformed marks packed data that cannot be decoded.
var ErrMalformed = errors.New("malformed packed records")

// Reset starts decoding buf.
func (d *Decoder) Reset(buf []byte) { d.buf = buf }

// Len is the number of undecoded bytes.
func (d *Decoder) Len() int { return len(d.buf) }

// uvarint reads a varint; lengths, partitions and offsets mostly take one
// or two bytes, read here without binary.Uvarint's loop (which does not
// inline). Same results as binary.Uvarint for every input.
func (d *Decoder) uvarint() (uint64, error) {
	if len(d.buf) > 0 && d.buf[0] < 0x80 {
		v := uint64(d.buf[0])
		d.buf = d.buf[1:]
		return v, nil
	}
	if len(d.buf) > 1 && d.buf[1] < 0x80 {
		v := uint64(d.buf[0]&0x7f) | uint64(d.buf[1])<<7
		d.buf = d.buf[2:]
		return v, nil
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		return 0, ErrMalformed
	}
	d.buf = d.buf[n:]
	return v, nil
}

// varint reads a zig-zag varint (binary.Varint's encoding).
func (d *Decoder) varint() (int64, error) {
	ux, err := d.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x, err
}

func (d *Decoder) bytes() ([]byte, error) {
	n, err := d.uvarint()
	if err != nil || n > uint64(len(d.buf)) {
		return nil, ErrMalformed
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b, nil
}

func (d *Decoder) byte1() (byte, error) {
	if len(d.buf) == 0 {
		return 0, ErrMalformed
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	return b, nil
}

func (d *Decoder) str() (string, error) {
	b, err := d.bytes()
	if err != nil {
		return "", err
	}
	if string(b) == d.last { // cheaper than hashing for the map
		return d.last, nil
	}
	if s, ok := d.strings[string(b)]; ok { // no allocation for the lookup
		d.last = s
		return s, nil
	}
	if d.strings == nil {
		d.strings = map[string]string{}
	}
	if len(d.strings) > 1024 {
		clear(d.strings)
	}
	s := string(b)
	d.strings[s] = s
	d.last = s
	return s, nil
}

// Record decodes the next record into r.
func (d *Decoder) Record(r *chain.Raw) error {
	flags, err := d.byte1()
	if err != nil {
		return err
	}
	*r = chain.Raw{}
	if r.Topic, err = d.str(); err != nil {
		return err
	}
	p, err := d.varint()
	if err != nil || p < -1<<31 || p > 1<<31-1 {
		return ErrMalformed
	}
	r.Partition = int32(p)
	if r.Offset, err = d.varint(); err != nil {
		return err
	}
	if flags&flagKeyNull == 0 {
		if r.Key, err = d.bytes(); err != nil {
			return err
		}
	}
	if flags&flagValueNull == 0 {
		if r.Value, err = d.bytes(); err != nil {
			return err
		}
	}
	nh, err := d.uvarint()
	if err != nil || nh > uint64(len(d.buf)) {
		return ErrMalformed
	}
	if nh > 0 {
		r.Headers = make([]sdk.Header, nh)
		for i := range r.Headers {
			h := &r.Headers[i]
			if h.Key, err = d.str(); err != nil {
				return err
			}
			null, err := d.byte1()
			if err != nil {
				return err
			}
			if null == 0 {
				if h.Value, err = d.bytes(); err != nil {
					return err
				}
			}
		}
	}
	if flags&flagTimestamp != 0 {
		ts, err := d.varint()
		if err != nil {
			return err
		}
		r.Timestamp = time.Unix(0, ts)
	}
	return nil
}

// SourceExtras decodes what follows a source record.
func (d *Decoder) SourceExtras() (partition, offset []byte, boundary byte, err error) {
	if partition, err = d.bytes(); err != nil {
		return nil, nil, 0, err
	}
	if offset, err = d.bytes(); err != nil {
		return nil, nil, 0, err
	}
	if boundary, err = d.byte1(); err != nil {
		return nil, nil, 0, err
	}
	if boundary > 2 {
		return nil, nil, 0, fmt.Errorf("%w: boundary %d", ErrMalformed, boundary)
	}
	return partition, offset, boundary, nil
}
