// Command connectd-kafka-replication is the KafkaReplicationSource
// connector plugin.
package main

import (
	"os"
	"runtime/debug"

	kafka "github.com/connectd/connectd/connectors/kafka"
	"github.com/connectd/connectd/framework/convert"
	"github.com/connectd/connectd/framework/convert/schemaregistry"
	"github.com/connectd/connectd/plugins"
)

// gcPercent is the plugin's GOGC unless the worker chose a policy for its
// plugins (plugin.gogc or plugin.gomemlimit put GOGC / GOMEMLIMIT in the
// plugin's environment, and then the SDK keeps no heap floor either).
//
// The plugin's live heap is small (the records of the polls in flight, a
// few MiB per task), but plugins.Serve keeps a 64 MiB floor under the heap
// goal, and with Go's default GOGC=100 the goal is twice (floor + live):
// up to ~64 MiB of garbage plus the live heap again is touched between
// collections. At 12 the garbage allowance is an eighth of that, about
// 10 MiB; a collection marks only the small live heap (the floor is never
// scanned), so the extra collections cost little CPU, the less since the
// task reuses its poll memory (docs/connectors/kafka-replication.md,
// "Memory and throughput"; 25 before that, 10–14 MB more resident).
const gcPercent = 12

func main() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(gcPercent)
	}
	plugins.Serve(kafka.NewConnector, plugins.WithConverters(convert.NewSet(schemaregistry.Infos()...)))
}
