package main

import (
	"encoding/binary"
	"strings"
	"testing"
)

// mm2String is Kafka's protocol STRING: int16 length, UTF-8 bytes.
func mm2String(s string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(s)))
	return append(b, s...)
}

func TestDecodeCheckpoint(t *testing.T) {
	key := append(append(mm2String("g1"), mm2String("a.orders")...), 0, 0, 0, 5)
	value := binary.BigEndian.AppendUint16(nil, 0)
	value = binary.BigEndian.AppendUint64(value, 1234)
	value = binary.BigEndian.AppendUint64(value, 1300)
	value = append(value, mm2String("meta")...)
	tests := []struct {
		name       string
		key, value []byte
		want       checkpoint
		err        string
	}{
		{"MM2 layout", key, value, checkpoint{"g1", "a.orders", 5, 1234, 1300, "meta"}, ""},
		{"version 1", key, append([]byte{0, 1}, value[2:]...), checkpoint{}, "version 1"},
		{"value cut in the metadata", key, value[:len(value)-1], checkpoint{}, "too short"},
		{"trailing value bytes", key, append(value, 0), checkpoint{}, "trailing"},
		{"key without partition", key[:len(key)-4], value, checkpoint{}, "want 4"},
		{"key cut in the group", key[:3], value, checkpoint{}, "too short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeCheckpoint(tt.key, tt.value)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
