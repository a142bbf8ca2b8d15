package workerconfig

import (
	"regexp"
	"sort"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

var noSuchProperty = regexp.MustCompile(`No such configuration property: "([^"]+)"`)

// checkClientProps has librdkafka check client settings the way it will
// use them: a setting it does not know (a Java client setting such as
// buffer.memory) is removed from m and recorded in dropped; a value it
// refuses stops start-up with the key named. The probe client has no
// brokers and connects nowhere.
func checkClientProps(kind, prefix string, m map[string]string, dropped map[string]string) error {
	if len(m) == 0 {
		return nil
	}
	for range len(m) + 1 {
		err := probe(kind, m)
		if err == nil {
			return nil
		}
		msg := err.Error()
		if sm := noSuchProperty.FindStringSubmatch(msg); sm != nil {
			if _, ok := m[sm[1]]; ok {
				dropped[prefix+sm[1]] = "not a librdkafka client setting"
				delete(m, sm[1])
				continue
			}
		}
		return keyError(culprit(kind, prefix, m), "%s", msg)
	}
	return nil
}

func probe(kind string, m map[string]string) error {
	// The probe client only parses its configuration: small Go-side
	// channels, since confluent-kafka-go's million-entry defaults allocate
	// 24 MiB per producer, garbage that lifted the worker's first heap
	// goals by as much.
	cm := kafka.ConfigMap{"log_level": 0, "go.events.channel.size": 16}
	if kind != "consumer" {
		cm["go.produce.channel.size"] = 0
	}
	for k, v := range m {
		cm[k] = v
	}
	if kind == "consumer" {
		cm["group.id"] = "connectd-config-check"
		c, err := kafka.NewConsumer(&cm)
		if err == nil {
			c.Close()
		}
		return err
	}
	p, err := kafka.NewProducer(&cm)
	if err == nil {
		p.Close()
	}
	return err
}

// culprit finds the setting librdkafka refuses (its message may use an
// alias, e.g. request.required.acks for acks) by probing one at a time.
func culprit(kind, prefix string, m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if probe(kind, map[string]string{k: m[k]}) != nil {
			return prefix + k
		}
	}
	return strings.TrimSuffix(prefix, ".")
}
