package aerofake_test

import (
	"context"
	"fmt"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/connectors/aerospike/aerofake"
)

// Start a server, point the real client at it, and inspect what it stored.
func ExampleStart() {
	srv, err := aerofake.Start(context.Background(), aerofake.Config{
		Namespaces: []aerofake.NamespaceConfig{{Name: "test", AllowTTL: true}},
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	host, port := srv.Host()
	client, err := as.NewClientWithPolicyAndHost(nil, as.NewHost(host, port))
	if err != nil {
		panic(err)
	}
	defer client.Close()

	key, _ := as.NewKey("test", "orders", "order-1")
	if err := client.Put(nil, key, as.BinMap{"total": 42}); err != nil {
		panic(err)
	}
	// Make the next write fail as a busy server would.
	srv.FailNext(1, aerofake.OpWrite, aerofake.KeyBusy)
	err = client.Put(nil, key, as.BinMap{"total": 43})
	fmt.Println("second put failed:", err != nil)

	rec, _, _ := srv.RecordByKey("test", "orders", "order-1")
	fmt.Println(rec.Bins["total"], rec.Generation, srv.Count("test", "orders"))
	// Output:
	// second put failed: true
	// 42 1 1
}
