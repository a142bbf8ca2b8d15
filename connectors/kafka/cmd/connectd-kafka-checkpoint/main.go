// Command connectd-kafka-checkpoint is the KafkaCheckpointSource connector
// plugin (MirrorMaker 2's MirrorCheckpointConnector).
package main

import (
	"github.com/connectd/connectd/connectors/kafka/checkpoint"
	"github.com/connectd/connectd/plugins"
)

func main() {
	plugins.Serve(checkpoint.NewConnector)
}
