package chain

import (
	"bytes"
	"reflect"
	"runtime"
	"testing"

	"github.com/connectd/connectd/framework/sdk"
)

// TestApplyToBoxed: records converted with boxes equal those converted
// without, through type switches, reflection and transforms, also after a
// collection (the boxes keep their slices alive), and without an
// allocation per record.
func TestApplyToBoxed(t *testing.T) {
	props := map[string]string{
		"transforms": "route", "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex": "(.*)", "transforms.route.replacement": "$1-out",
	}
	for name, props := range map[string]map[string]string{"plain": {}, "transformed": props} {
		t.Run(name, func(t *testing.T) {
			s, err := NewSink(props, ByteArrayDefaults())
			if err != nil {
				t.Fatal(err)
			}
			in := []Raw{
				{Topic: "t", Key: []byte("k1"), Value: []byte("value one")},
				{Topic: "t", Key: nil, Value: []byte{}},
				{Topic: "t", Key: []byte{}, Value: nil},
			}
			boxes := make([][2][]byte, len(in))
			got := make([]sdk.SinkRecord, len(in))
			for i := range in {
				if keep, fail := s.ApplyToBoxed(in[i], &got[i], &boxes[i]); !keep || fail != nil {
					t.Fatalf("record %d: keep %v, %v", i, keep, fail)
				}
			}
			runtime.GC()
			for i := range in {
				want, keep, fail := s.Apply(in[i])
				if !keep || fail != nil {
					t.Fatal(fail)
				}
				if !reflect.DeepEqual(&got[i], want) {
					t.Fatalf("record %d: boxed %+v, plain %+v", i, got[i], *want)
				}
				for _, kv := range [][2]any{{got[i].Key, in[i].Key}, {got[i].Value, in[i].Value}} {
					b, isBytes := kv[0].([]byte)
					if kv[1].([]byte) == nil {
						if kv[0] != nil {
							t.Fatalf("record %d: null became %#v", i, kv[0])
						}
						continue
					}
					if !isBytes || !bytes.Equal(b, kv[1].([]byte)) || (len(b) > 0 && &b[0] != &kv[1].([]byte)[0]) {
						t.Fatalf("record %d: %#v does not carry the input bytes", i, kv[0])
					}
				}
			}
			allocs := testing.AllocsPerRun(100, func() {
				_, _ = s.ApplyToBoxed(in[0], &got[0], &boxes[0])
			})
			if name == "plain" && allocs != 0 {
				t.Fatalf("%v allocations per boxed record", allocs)
			}
		})
	}
}
