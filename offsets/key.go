package offsets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// ErrFormat marks a source partition, offset or offsets-topic key that does
// not follow Kafka Connect's format.
var ErrFormat = errors.New("offsets: invalid format")

// Offset is one source partition's committed position, both as JSON object
// bytes. A nil Offset means "no offset": written, it is a tombstone that
// removes the partition.
type Offset struct {
	Partition json.RawMessage
	Offset    json.RawMessage
}

// Canonical validates a source partition or offset and returns its
// canonical encoding: a JSON object with string keys and primitive values
// (string, number, boolean or null), keys sorted, no insignificant space.
// Keys of the offsets topic must be byte-identical for one partition, or
// compaction would keep several values and a reader could apply a stale
// one, so every key is built from the canonical form.
func Canonical(obj []byte) ([]byte, error) {
	m, err := decodeObject(obj)
	if err != nil {
		return nil, err
	}
	return encodeObject(m)
}

func decodeObject(obj []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %q is not JSON: %v", ErrFormat, truncate(obj), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: %q has data after the JSON object", ErrFormat, truncate(obj))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not a JSON object", ErrFormat, truncate(obj))
	}
	for k, val := range m {
		switch val := val.(type) {
		case json.Number:
			// Readers decode offsets into float64 (Go) or double (Java):
			// a number past its range, such as 1e400, is written fine
			// but then fails every read of the connector's offsets.
			if _, err := val.Float64(); err != nil {
				return nil, fmt.Errorf("%w: field %q of %q is a number out of range", ErrFormat, k, truncate(obj))
			}
		case string, bool, nil:
		default:
			return nil, fmt.Errorf("%w: field %q of %q is not a string, number, boolean or null", ErrFormat, k, truncate(obj))
		}
	}
	return m, nil
}

func encodeObject(m map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Key returns the offsets-topic key of a connector's source partition:
// ["<connector>",{<partition>}] with the partition in canonical form.
func Key(connector string, partition []byte) ([]byte, error) {
	if connector == "" {
		return nil, fmt.Errorf("%w: empty connector name", ErrFormat)
	}
	p, err := Canonical(partition)
	if err != nil {
		return nil, fmt.Errorf("source partition: %w", err)
	}
	name, err := json.Marshal(connector)
	if err != nil {
		return nil, fmt.Errorf("%w: connector name: %v", ErrFormat, err)
	}
	key := make([]byte, 0, len(name)+len(p)+3)
	key = append(key, '[')
	key = append(key, name...)
	key = append(key, ',')
	key = append(key, p...)
	key = append(key, ']')
	return key, nil
}

// ParseKey splits an offsets-topic key into the connector name and the
// canonical source partition. Like Kafka Connect it accepts exactly two
// elements, a string and an object.
func ParseKey(key []byte) (connector string, partition []byte, err error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(key, &parts); err != nil {
		return "", nil, fmt.Errorf("%w: key %q is not a JSON array: %v", ErrFormat, truncate(key), err)
	}
	if len(parts) != 2 {
		return "", nil, fmt.Errorf("%w: key %q has %d elements, want [\"<connector>\",{partition}]", ErrFormat, truncate(key), len(parts))
	}
	if err := json.Unmarshal(parts[0], &connector); err != nil {
		return "", nil, fmt.Errorf("%w: key %q: first element is not a string", ErrFormat, truncate(key))
	}
	partition, err = Canonical(parts[1])
	if err != nil {
		return "", nil, fmt.Errorf("key %q: %w", truncate(key), err)
	}
	return connector, partition, nil
}

func truncate(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
