package offsets

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/internal/compacted"
	"github.com/connectd/connectd/internal/kafkalog"
)

// followerStallAfter is how long the follower's consumer may sit behind a
// partition's high watermark without moving before it is replaced. Open
// exactly-once transactions keep the high watermark ahead of a
// read_committed reader for as long as they last, so a needless
// replacement now and then is the price of never staying stuck after a
// broker restart.
const followerStallAfter = 10 * time.Second

// Follower keeps the committed offsets of every connector on one offsets
// topic in memory, following the topic with one consumer. A worker's
// source tasks read their offsets from it when they start, instead of
// each reading the whole topic with a consumer of its own: with a
// thousand connectors that was a thousand full reads after a restart.
// Read answers as Store.Read does: read_committed, up to the high
// watermarks as of the call.
type Follower struct {
	cfg  Config
	prod *kafka.Producer // answers the reader's end-offset queries
	r    *compacted.Reader

	mu     sync.Mutex
	latest map[string]map[string][]byte // connector → partition → offset
}

// Follow starts a Follower of the Store's topic. It returns once the
// reader is started, not once it has read to the end (Read waits for
// that). Close releases it.
func (s *Store) Follow(ctx context.Context) (*Follower, error) {
	client := kafka.ConfigMap{}
	for k, v := range s.cfg.Client {
		client[k] = v
	}
	pc := kafka.ConfigMap{"go.delivery.reports": false, "go.produce.channel.size": 0, "go.events.channel.size": 100}
	for k, v := range client {
		pc[k] = v
	}
	prod, err := kafkalog.NewProducer(s.cfg.Logger, pc)
	if err != nil {
		return nil, fmt.Errorf("offsets topic %q: watermark client: %w", s.cfg.Topic, err)
	}
	go func() {
		for range prod.Events() { // nothing is produced; errors are logged by librdkafka
		}
	}()
	f := &Follower{cfg: s.cfg, prod: prod, latest: map[string]map[string][]byte{}}
	f.r, err = compacted.New(compacted.Opts{
		Topic: s.cfg.Topic, Client: client, GroupID: "connectd-offsets-follower",
		End: compacted.HighWatermark, Watermarks: prod, StallAfter: followerStallAfter, Logger: s.cfg.Logger,
	})
	if err != nil {
		prod.Close()
		return nil, err
	}
	// The reader follows the topic until Close, whatever ctx does after
	// the start.
	if err := f.r.Start(context.WithoutCancel(ctx), f.apply); err != nil {
		f.Close()
		if errors.Is(err, compacted.ErrTopicMissing) {
			return nil, missing(s.cfg.Topic)
		}
		return nil, fmt.Errorf("offsets topic %q: %w", s.cfg.Topic, err)
	}
	return f, nil
}

func (f *Follower) apply(b compacted.Batch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range b.Records {
		applyRecord(f.latest, r, nil, f.cfg.Logger)
	}
}

// Read returns the connector's committed offsets, once the follower has
// read every partition to the high watermark it has now (bounded by
// Config.ReadTimeout). Partitions are canonical JSON; the result is
// sorted by partition.
func (f *Follower) Read(ctx context.Context, connector string) ([]Offset, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.ReadTimeout)
	defer cancel()
	if err := f.r.ReadToEnd(ctx); err != nil {
		return nil, readError(f.cfg, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return sortedOffsets(f.latest[connector]), nil
}

// Close stops following the topic.
func (f *Follower) Close() {
	f.r.Close()
	f.prod.Close()
}
