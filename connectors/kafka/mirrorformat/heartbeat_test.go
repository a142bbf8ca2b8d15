package mirrorformat

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/mirrortest"
)

// TestHeartbeatBytes pins the layout: the bytes were written out by hand
// from MM2's schemas (and TestHeartbeatAgainstMM2 checks them against MM2's
// own classes).
func TestHeartbeatBytes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		hb         Heartbeat
		key, value string // hex
	}{
		{"aliases", Heartbeat{"A", "bb", 1_700_000_000_123}, "0001" + "41" + "0002" + "6262", "0000" + "0000018bcfe5687b"},
		{"empty aliases, zero time", Heartbeat{"", "", 0}, "0000" + "0000", "0000" + "0000000000000000"},
		{"negative time", Heartbeat{"x", "y", -1}, "000178" + "000179", "0000" + "ffffffffffffffff"},
		{"utf-8 counts bytes", Heartbeat{"é", "z", 1}, "0002c3a9" + "00017a", "0000" + "0000000000000001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := tc.hb.Key()
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(key); got != tc.key {
				t.Errorf("key %s, want %s", got, tc.key)
			}
			if got := hex.EncodeToString(tc.hb.Value()); got != tc.value {
				t.Errorf("value %s, want %s", got, tc.value)
			}
			back, err := DecodeHeartbeat(key, tc.hb.Value())
			if err != nil || back != tc.hb {
				t.Fatalf("decoded %+v, %v; want %+v", back, err, tc.hb)
			}
		})
	}
}

func TestHeartbeatAliasTooLong(t *testing.T) {
	long := strings.Repeat("a", 1<<15)
	if _, err := (Heartbeat{SourceClusterAlias: long, TargetClusterAlias: "b"}).Key(); err == nil {
		t.Fatal("a 32768-byte alias encoded")
	}
	if _, err := (Heartbeat{SourceClusterAlias: long[1:], TargetClusterAlias: "b"}).Key(); err != nil {
		t.Fatalf("a 32767-byte alias: %v", err)
	}
}

func TestDecodeHeartbeatRejects(t *testing.T) {
	good := Heartbeat{"src", "dst", 42}
	key, _ := good.Key()
	value := good.Value()
	for _, tc := range []struct {
		name       string
		key, value []byte
		want       string
	}{
		{"empty key", nil, value, "ends before the length of sourceClusterAlias"},
		{"truncated alias", key[:4], value, "has length 3 with 2 bytes left"},
		{"missing target", key[:5], value, "ends before the length of targetClusterAlias"},
		{"negative length", []byte{0xff, 0xff}, value, "has length -1"},
		{"trailing key bytes", append(bytes.Clone(key), 0), value, "1 bytes after the key's fields"},
		{"short value", key, value[:9], "value has 9 bytes"},
		{"long value", key, append(bytes.Clone(value), 0), "value has 11 bytes"},
		{"version 1", key, append([]byte{0, 1}, value[2:]...), "value version 1, want 0"},
		{"checkpoint-like key", []byte("\x00\x01g\x00\x01t\x00\x00\x00\x00"), value, "4 bytes after the key's fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeHeartbeat(tc.key, tc.value)
			if !errors.Is(err, ErrHeartbeatFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestHeartbeatSourcePartition(t *testing.T) {
	p := Heartbeat{"a", "b", 1}.SourcePartition()
	if len(p) != 2 || p["sourceClusterAlias"] != "a" || p["targetClusterAlias"] != "b" {
		t.Fatalf("partition %v", p)
	}
}

// TestHeartbeatAgainstMM2 checks the encoding against MirrorMaker 2
// 4.1.1's own Heartbeat class: MM2's recordKey/recordValue write the same
// bytes, and its deserializeRecord reads ours back.
func TestHeartbeatAgainstMM2(t *testing.T) {
	tool := mirrortest.Build(t)
	hbs := []Heartbeat{
		{"A", "bb", 1_700_000_000_123},
		{"", "", 0},
		{"us-east.prod", "eu-west", -5},
		{"é–ü", strings.Repeat("x", 300), 1<<62 + 7},
	}
	var want []mirrortest.Record
	var ours []mirrortest.KV
	for _, h := range hbs {
		want = append(want, mirrortest.Record{Format: mirrortest.Heartbeat, SourceClusterAlias: h.SourceClusterAlias,
			TargetClusterAlias: h.TargetClusterAlias, Timestamp: h.Timestamp})
		key, err := h.Key()
		if err != nil {
			t.Fatal(err)
		}
		ours = append(ours, mirrortest.KV{Key: key, Value: h.Value()})
	}
	theirs := tool.Encode(t, want...)
	decoded := tool.Decode(t, mirrortest.Heartbeat, ours...)
	for i, h := range hbs {
		if !bytes.Equal(ours[i].Key, theirs[i].Key) || !bytes.Equal(ours[i].Value, theirs[i].Value) {
			t.Errorf("%+v: ours %x/%x, MM2 %x/%x", h, ours[i].Key, ours[i].Value, theirs[i].Key, theirs[i].Value)
		}
		if d := decoded[i]; d.Error != "" || d.SourceClusterAlias != h.SourceClusterAlias ||
			d.TargetClusterAlias != h.TargetClusterAlias || d.Timestamp != h.Timestamp {
			t.Errorf("%+v: MM2 decoded %+v", h, d)
		}
	}
}
