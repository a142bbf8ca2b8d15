package worker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
)

func datagenProps(topic string, tasks int, iterations int64) map[string]string {
	return map[string]string{
		"connector.class":                "DatagenSource",
		"tasks.max":                      fmt.Sprint(tasks),
		"kafka.topic":                    topic,
		"quickstart":                     "counter",
		"iterations":                     fmt.Sprint(iterations),
		"max.interval":                   "0",
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
	}
}

func TestSourceExactlyOnceBoundaries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra map[string]string
	}{
		{"poll", map[string]string{"transaction.boundary": "poll"}},
		{"interval", map[string]string{"transaction.boundary": "interval", "transaction.boundary.interval.ms": "100"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			topic := kafkatest.Topic(t, kafkatest.Partitions(3))
			w, st := e.start(e.config(true))
			props := datagenProps(topic, 2, 3000)
			for k, v := range tc.extra {
				props[k] = v
			}
			name := kafkatest.UniqueName(t, "c")
			e.run(w, name, props)
			st.waitFor(t, name+"-0", worker.StateRunning, 30*time.Second)
			msgs := readCommitted(t, topic, 6000, 60*time.Second)
			checkExactlyOnce(t, msgs, 2, 3000)
		})
	}
}
