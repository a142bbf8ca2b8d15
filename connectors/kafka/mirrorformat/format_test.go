package mirrorformat

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The golden bytes follow MM2 4.1's OffsetSync and Checkpoint classes
// field by field: KEY_SCHEMA / VALUE_SCHEMA written by Kafka's protocol
// Schema.write (INT16 length-prefixed STRING, big-endian integers), the
// checkpoint value preceded by HEADER_SCHEMA {version: INT16 = 0}.
func TestOffsetSyncGolden(t *testing.T) {
	s := OffsetSync{Topic: "orders", Partition: 3, UpstreamOffset: 258, DownstreamOffset: 0x0102030405060708}
	wantKey := []byte{0, 6, 'o', 'r', 'd', 'e', 'r', 's', 0, 0, 0, 3}
	wantValue := []byte{0, 0, 0, 0, 0, 0, 1, 2, 1, 2, 3, 4, 5, 6, 7, 8}
	key, err := s.Key()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(key, wantKey) {
		t.Errorf("key = %v, want %v", key, wantKey)
	}
	if v := s.Value(); !bytes.Equal(v, wantValue) {
		t.Errorf("value = %v, want %v", v, wantValue)
	}
	got, err := DecodeOffsetSync(wantKey, wantValue)
	if err != nil || got != s {
		t.Errorf("decode = %+v, %v; want %+v", got, err, s)
	}
}

func TestCheckpointGolden(t *testing.T) {
	c := Checkpoint{Group: "g1", Topic: "A.orders", Partition: 1, UpstreamOffset: 10, DownstreamOffset: 7, Metadata: "m"}
	wantKey := []byte{0, 2, 'g', '1', 0, 8, 'A', '.', 'o', 'r', 'd', 'e', 'r', 's', 0, 0, 0, 1}
	wantValue := []byte{0, 0, // version 0
		0, 0, 0, 0, 0, 0, 0, 10,
		0, 0, 0, 0, 0, 0, 0, 7,
		0, 1, 'm'}
	key, err := c.Key()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(key, wantKey) {
		t.Errorf("key = %v, want %v", key, wantKey)
	}
	value, err := c.Value()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(value, wantValue) {
		t.Errorf("value = %v, want %v", value, wantValue)
	}
	got, err := DecodeCheckpoint(wantKey, wantValue)
	if err != nil || got != c {
		t.Errorf("decode = %+v, %v; want %+v", got, err, c)
	}
}

func TestRoundTrip(t *testing.T) {
	syncs := []OffsetSync{
		{Topic: "", Partition: 0, UpstreamOffset: 0, DownstreamOffset: 0},
		{Topic: "ü-topic", Partition: 2147483647, UpstreamOffset: -1, DownstreamOffset: 1 << 62},
	}
	for _, s := range syncs {
		k, err := s.Key()
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeOffsetSync(k, s.Value())
		if err != nil || got != s {
			t.Errorf("round trip of %+v = %+v, %v", s, got, err)
		}
	}
	cps := []Checkpoint{
		{},
		{Group: "connect-x", Topic: "B.A.t", Partition: 5, UpstreamOffset: 1 << 40, DownstreamOffset: 99, Metadata: strings.Repeat("x", 300)},
	}
	for _, c := range cps {
		k, err := c.Key()
		if err != nil {
			t.Fatal(err)
		}
		v, err := c.Value()
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeCheckpoint(k, v)
		if err != nil || got != c {
			t.Errorf("round trip of %+v = %+v, %v", c, got, err)
		}
	}
}

func TestDecodeMalformed(t *testing.T) {
	goodSyncKey := []byte{0, 1, 't', 0, 0, 0, 0}
	goodSyncValue := make([]byte, 16)
	goodCpKey := []byte{0, 1, 'g', 0, 1, 't', 0, 0, 0, 0}
	goodCpValue := append(make([]byte, 18), 0, 0)
	cases := []struct {
		name       string
		checkpoint bool
		key, value []byte
		want       string
	}{
		{"sync short key", false, []byte{0, 5, 't'}, goodSyncValue, "topic needs 5 bytes"},
		{"sync short value", false, goodSyncKey, goodSyncValue[:9], "offset needs 8 bytes"},
		{"sync trailing", false, goodSyncKey, append(bytes.Clone(goodSyncValue), 1), "trailing"},
		{"sync null topic", false, []byte{0xff, 0xff, 0, 0, 0, 0}, goodSyncValue, "null"},
		{"checkpoint version", true, goodCpKey, append([]byte{0, 1}, goodCpValue[2:]...), "unsupported version 1"},
		{"checkpoint short", true, goodCpKey, goodCpValue[:10], "needs 8 bytes"},
		{"checkpoint bad utf8", true, []byte{0, 1, 0xff, 0, 1, 't', 0, 0, 0, 0}, goodCpValue, "not UTF-8"},
		{"checkpoint read as sync", false, goodCpKey, goodCpValue, "trailing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.checkpoint {
				_, err = DecodeCheckpoint(tc.key, tc.value)
			} else {
				_, err = DecodeOffsetSync(tc.key, tc.value)
			}
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrMalformed containing %q", err, tc.want)
			}
		})
	}
	if _, err := DecodeCheckpoint(goodCpKey, goodCpValue); err != nil {
		t.Errorf("the good checkpoint fails: %v", err)
	}
	if _, err := (Checkpoint{Metadata: strings.Repeat("x", 40000)}).Value(); err == nil {
		t.Error("a 40000-byte metadata encodes")
	}
}
