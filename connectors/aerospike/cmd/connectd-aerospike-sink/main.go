// Command connectd-aerospike-sink is the AerospikeSink connector plugin.
package main

import (
	"github.com/connectd/connectd/connectors/aerospike"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/plugins"
)

func main() {
	plugins.Serve(func() *aerospike.Connector { return &aerospike.Connector{} }, plugins.WithConverters(convert.NewSet(schemaregistry.Infos()...)))
}
