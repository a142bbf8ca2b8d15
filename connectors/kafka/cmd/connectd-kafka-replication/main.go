// Command connectd-kafka-replication is the KafkaReplicationSource
// connector plugin.
package main

import (
	kafka "github.com/connectd/connectd/connectors/kafka"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/plugins"
)

func main() {
	plugins.Serve(kafka.NewConnector, plugins.WithConverters(convert.NewSet(schemaregistry.Infos()...)))
}
