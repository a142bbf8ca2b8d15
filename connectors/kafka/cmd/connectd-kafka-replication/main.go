// Command connectd-kafka-replication is the KafkaReplicationSource
// connector plugin.
package main

import (
	kafka "github.com/connectd/connectd/connectors/kafka"
	"github.com/connectd/connectd/plugins"
)

func main() { plugins.Serve(kafka.NewConnector()) }
