package aerofake_test

import (
	"testing"

	as "github.com/aerospike/aerospike-client-go/v7"
)

func TestSmoke(t *testing.T) {
	_, c := testServer(t)
	k := mustKey(t, "test", "demo", "key1")
	if err := c.Put(nil, k, as.BinMap{"a": 1, "b": "x"}); err != nil {
		t.Fatal(err)
	}
	r, err := c.Get(nil, k)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
}
