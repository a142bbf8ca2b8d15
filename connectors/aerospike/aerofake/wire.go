package aerofake

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Proto header: version u8, type u8, size u48 (big-endian).
const (
	protoVersion    = 2
	protoInfo       = 1
	protoAdmin      = 2
	protoMsg        = 3
	protoCompressed = 4

	protoHeaderSize = 8
	msgHeaderSize   = 22
)

// info1 bits.
const (
	info1Read      = 0x01
	info1GetAll    = 0x02
	info1Batch     = 0x08
	info1NoBinData = 0x20
)

// info2 bits.
const (
	info2Write         = 0x01
	info2Delete        = 0x02
	info2Generation    = 0x04
	info2GenerationGT  = 0x08
	info2DurableDelete = 0x10
	info2CreateOnly    = 0x20
	info2RespondAllOps = 0x80
)

// info3 bits.
const (
	info3Last            = 0x01
	info3PartitionDone   = 0x04
	info3UpdateOnly      = 0x08
	info3CreateOrReplace = 0x10
	info3ReplaceOnly     = 0x20
)

// Field types.
const (
	fieldNamespace        = 0
	fieldSet              = 1
	fieldKey              = 2
	fieldRecordVersion    = 3
	fieldDigest           = 4
	fieldMRTID            = 5
	fieldMRTDeadline      = 6
	fieldTranID           = 7
	fieldSocketTimeout    = 9
	fieldRecordsPerSecond = 10
	fieldPIDArray         = 11
	fieldDigestArray      = 12
	fieldMaxRecords       = 13
	fieldBValArray        = 15
	fieldIndexName        = 21
	fieldIndexRange       = 22
	fieldIndexContext     = 23
	fieldIndexType        = 26
	fieldUDFFilename      = 30
	fieldUDFFunction      = 31
	fieldUDFArglist       = 32
	fieldUDFOp            = 33
	fieldQueryBinList     = 40
	fieldBatchIndex       = 41
	fieldBatchIndexSet    = 42
	fieldFilterExp        = 43
)

// Op types.
const (
	opRead       = 1
	opWrite      = 2
	opCDTRead    = 3
	opCDTModify  = 4
	opIncr       = 5
	opExpRead    = 7
	opExpModify  = 8
	opAppend     = 9
	opPrepend    = 10
	opTouch      = 11
	opBitsRead   = 12
	opBitsModify = 13
	opDeleteAll  = 14
	opHLLRead    = 15
	opHLLModify  = 16
)

// Particle types.
const (
	ptNull    = 0
	ptInteger = 1
	ptFloat   = 2
	ptString  = 3
	ptBlob    = 4
	ptBool    = 17
	ptHLL     = 18
	ptMap     = 19
	ptList    = 20
	ptGeoJSON = 23
)

// maxBinNameLen is the longest bin name the server accepts.
const maxBinNameLen = 15

// citrusleafEpoch is 2010-01-01T00:00:00Z, the origin of void-times.
const citrusleafEpoch = 1262304000

// errMalformed marks a message whose structure is broken inside an intact
// frame; the server answers PARAMETER_ERROR and keeps the connection.
var errMalformed = errors.New("aerofake: malformed message")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errMalformed}, args...)...)
}

// field is one AS_MSG field; data aliases the request buffer.
type field struct {
	typ  byte
	data []byte
}

// op is one AS_MSG operation; name and value alias the request buffer.
type op struct {
	code  byte
	ptype byte
	name  []byte
	value []byte
}

// message is a parsed AS_MSG. Slices alias the frame it was parsed from, so a
// message is only valid until the connection reads the next frame.
type message struct {
	info1, info2, info3, info4 byte
	generation                 uint32
	ttl                        uint32
	fields                     []field
	ops                        []op
}

func (m *message) field(typ byte) ([]byte, bool) {
	for _, f := range m.fields {
		if f.typ == typ {
			return f.data, true
		}
	}
	return nil, false
}

// parseMessage decodes an AS_MSG body (everything after the proto header).
// It reuses m's slices. It never panics on any input.
func parseMessage(body []byte, m *message) error {
	if len(body) < msgHeaderSize {
		return malformed("message of %d bytes is shorter than its header", len(body))
	}
	// body[0] is header_sz. CE 8.1 ignores it and reads the fields at
	// offset 22 whatever it says; so does this server.
	m.info1, m.info2, m.info3, m.info4 = body[1], body[2], body[3], body[4]
	m.generation = binary.BigEndian.Uint32(body[6:10])
	m.ttl = binary.BigEndian.Uint32(body[10:14])
	nFields := int(binary.BigEndian.Uint16(body[18:20]))
	nOps := int(binary.BigEndian.Uint16(body[20:22]))
	m.fields = m.fields[:0]
	m.ops = m.ops[:0]
	rest, err := parseFields(body[msgHeaderSize:], nFields, &m.fields)
	if err != nil {
		return err
	}
	rest, err = parseOps(rest, nOps, &m.ops)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return malformed("%d trailing bytes after the last op", len(rest))
	}
	return nil
}

// parseFields reads n fields from b and returns what follows them.
func parseFields(b []byte, n int, out *[]field) ([]byte, error) {
	for i := 0; i < n; i++ {
		if len(b) < 5 {
			return nil, malformed("field %d truncated", i)
		}
		sz := binary.BigEndian.Uint32(b[0:4])
		if sz < 1 || uint64(sz) > uint64(len(b)-4) {
			return nil, malformed("field %d size %d out of range", i, sz)
		}
		*out = append(*out, field{typ: b[4], data: b[5 : 4+sz]})
		b = b[4+sz:]
	}
	return b, nil
}

// parseOps reads n ops from b and returns what follows them.
func parseOps(b []byte, n int, out *[]op) ([]byte, error) {
	for i := 0; i < n; i++ {
		if len(b) < 8 {
			return nil, malformed("op %d truncated", i)
		}
		sz := binary.BigEndian.Uint32(b[0:4])
		nameLen := uint32(b[7])
		if sz < 4+nameLen || uint64(sz) > uint64(len(b)-4) {
			return nil, malformed("op %d size %d out of range", i, sz)
		}
		*out = append(*out, op{
			code:  b[4],
			ptype: b[5],
			name:  b[8 : 8+nameLen],
			value: b[8+nameLen : 4+sz],
		})
		b = b[4+sz:]
	}
	return b, nil
}

// appendProtoHeader appends a proto header for a body of size bytes.
func appendProtoHeader(dst []byte, typ byte, size int) []byte {
	v := uint64(protoVersion)<<56 | uint64(typ)<<48 | uint64(size)&0xFFFFFFFFFFFF
	return binary.BigEndian.AppendUint64(dst, v)
}

// putProtoSize rewrites the size of the proto header at buf[off:off+8] so it
// covers everything after it.
func putProtoSize(buf []byte, off int, typ byte) {
	size := len(buf) - off - protoHeaderSize
	v := uint64(protoVersion)<<56 | uint64(typ)<<48 | uint64(size)&0xFFFFFFFFFFFF
	binary.BigEndian.PutUint64(buf[off:], v)
}

// appendMsgHeader appends a 22-byte AS_MSG header.
func appendMsgHeader(dst []byte, info1, info3 byte, rc ResultCode, gen, voidTime, txnTTL uint32, nFields, nOps int) []byte {
	dst = append(dst, msgHeaderSize, info1, 0, info3, 0, byte(rc))
	dst = binary.BigEndian.AppendUint32(dst, gen)
	dst = binary.BigEndian.AppendUint32(dst, voidTime)
	dst = binary.BigEndian.AppendUint32(dst, txnTTL)
	dst = binary.BigEndian.AppendUint16(dst, uint16(nFields))
	return binary.BigEndian.AppendUint16(dst, uint16(nOps))
}

func appendField(dst []byte, typ byte, data []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(data)+1))
	dst = append(dst, typ)
	return append(dst, data...)
}

func appendFieldString(dst []byte, typ byte, data string) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(data)+1))
	dst = append(dst, typ)
	return append(dst, data...)
}

func appendOp(dst []byte, code, ptype byte, name string, value []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(4+len(name)+len(value)))
	dst = append(dst, code, ptype, 0, byte(len(name)))
	dst = append(dst, name...)
	return append(dst, value...)
}
