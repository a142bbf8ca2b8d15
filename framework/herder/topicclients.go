package herder

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/compacted"
)

// How long the reader of an internal topic may sit behind the end of a
// partition without moving before its consumer is replaced (see
// internal/compacted).
const (
	// Status records are small and unconditional, so a healthy reader
	// is never that far behind.
	statusReaderStallAfter = 5 * time.Second
	// The end is the high watermark, which an open leader transaction
	// keeps ahead of a read_committed reader; those last milliseconds,
	// or until the transaction times out (15 s) if the leader died
	// mid-way, when a needless replacement costs nothing.
	configReaderStallAfter = 10 * time.Second
)

// openTopic creates the writer and the reader of one internal compacted
// topic (config or status). The reader (internal/compacted) asks the
// writer's connection where the topic ends, not its own consumer, which
// may be the stuck part it watches for. o holds the reader's own options;
// the topic, client, watermarks and logger are filled in here. onEvent
// receives the writer's events (errors, and delivery reports of writes
// without a channel of their own) on a goroutine counted in wg, as are
// the writer's log lines.
func (h *Herder) openTopic(log *slog.Logger, what, topic, clientID string, own kafka.ConfigMap,
	o compacted.Opts, wg *sync.WaitGroup, onEvent func(kafka.Event)) (*kafka.Producer, *compacted.Reader, error) {
	prod, err := kafka.NewProducer(h.producerConfig(clientID, own))
	if err != nil {
		return nil, nil, fmt.Errorf("%s writer: %w", what, err)
	}
	o.Topic, o.Client, o.Watermarks, o.Logger = topic, *h.clientConfig(clientID+"-reader", nil), prod, log
	r, err := compacted.New(o)
	if err != nil {
		prod.Close()
		return nil, nil, fmt.Errorf("%s reader: %w", what, err)
	}
	drainLogs(log, prod.Logs(), wg)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ev := range prod.Events() {
			onEvent(ev)
		}
	}()
	return prod, r, nil
}

// closeTopic closes what openTopic opened: the reader first, as it asks
// the writer's connection where the topic ends.
func closeTopic(r *compacted.Reader, prod *kafka.Producer, wg *sync.WaitGroup) {
	r.Close()
	prod.Flush(5000)
	prod.Close()
	wg.Wait()
}
