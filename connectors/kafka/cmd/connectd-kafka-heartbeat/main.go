// Command connectd-kafka-heartbeat is the KafkaHeartbeatSource connector
// plugin.
package main

import (
	"github.com/connectd/connectd/connectors/kafka/heartbeat"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/plugins"
)

func main() {
	plugins.Serve(heartbeat.NewConnector, plugins.WithConverters(convert.NewSet(schemaregistry.Infos()...)))
}
