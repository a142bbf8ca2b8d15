package herder

import (
	"encoding/json"
	"fmt"

	"github.com/connectd/connectd/framework/rest/api"
)

// Status-topic keys (KafkaStatusBackingStore).
const (
	keyStatusConnectorPrefix = "status-connector-"
	keyStatusTaskPrefix      = "status-task-"
	keyStatusTopicPrefix     = "status-topic-"
	statusTopicSeparator     = ":connector-"
)

func statusConnectorKey(name string) string { return keyStatusConnectorPrefix + name }
func statusTaskKey(id api.ConnectorTaskID) string {
	return keyStatusTaskPrefix + id.String()
}
func statusTopicKey(topic, connector string) string {
	return keyStatusTopicPrefix + topic + statusTopicSeparator + connector
}

// statusValue is the value of status-connector-* and status-task-* records.
type statusValue struct {
	State      string  `json:"state"`
	Trace      *string `json:"trace"`
	WorkerID   string  `json:"worker_id"`
	Generation int32   `json:"generation"`
	// Version is the running plugin's version, as Kafka Connect 4.1
	// writes it, so that every worker reports it.
	Version string `json:"version,omitempty"`
}

// topicStatusValue is the value of status-topic-* records (KIP-558).
type topicStatusValue struct {
	Topic topicStatus `json:"topic"`
}

type topicStatus struct {
	Name      string `json:"name"`
	Connector string `json:"connector"`
	Task      int    `json:"task"`
	Discover  int64  `json:"discoverTimestamp"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only the record types above are marshalled; they cannot fail.
		panic(fmt.Sprintf("herder: marshal %T: %v", v, err))
	}
	return b
}
