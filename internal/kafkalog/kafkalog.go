package kafkalog

import (
	"context"
	"log/slog"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Enable makes a producer or consumer config deliver librdkafka's log
// lines to the client's Logs() channel instead of stderr, and turns off
// the log line for every connection a broker closes when idle (it is
// noise, and the worker's clients reconnect on demand) unless cm sets it.
// Admin clients cannot take it: use NewAdmin.
func Enable(cm kafka.ConfigMap) {
	cm["go.logs.channel.enable"] = true
	if _, set := cm["log.connection.close"]; !set {
		cm["log.connection.close"] = false
	}
}

// Level maps librdkafka's syslog level to a slog level. librdkafka drops
// its level-7 lines itself unless a client's debug (or log_level=7) asks
// for them, so a level-7 line is a trace an operator asked for: it is INFO,
// shown at the worker's default level, not DEBUG, which would hide it
// until the worker's own debug logging were turned on as well.
func Level(syslog int) slog.Level {
	switch {
	case syslog <= 3:
		return slog.LevelError
	case syslog == 4:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// Drain logs every event of ch on log until ch is closed (the client's
// Close closes the channel confluent-kafka-go created).
func Drain(log *slog.Logger, ch chan kafka.LogEvent) {
	for ev := range ch {
		log.Log(context.Background(), Level(ev.Level), strings.TrimSpace(ev.Message),
			"client", ev.Name, "rdkafka_tag", ev.Tag)
	}
}

// Forward runs Drain in a goroutine and closes the returned channel when
// it has ended.
func Forward(log *slog.Logger, ch chan kafka.LogEvent) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		Drain(log, ch)
	}()
	return done
}

// NewProducer creates a producer whose log lines go to log.
func NewProducer(log *slog.Logger, cm kafka.ConfigMap) (*kafka.Producer, error) {
	cm = clone(cm)
	Enable(cm)
	p, err := kafka.NewProducer(&cm)
	if err != nil {
		return nil, err
	}
	Forward(log, p.Logs())
	return p, nil
}

// NewConsumer creates a consumer whose log lines go to log.
func NewConsumer(log *slog.Logger, cm kafka.ConfigMap) (*kafka.Consumer, error) {
	cm = clone(cm)
	Enable(cm)
	c, err := kafka.NewConsumer(&cm)
	if err != nil {
		return nil, err
	}
	Forward(log, c.Logs())
	return c, nil
}

// Admin is an admin client whose log lines go to a logger. Close it with
// its own Close, which also closes the producer underneath.
type Admin struct {
	*kafka.AdminClient
	p *kafka.Producer
}

// NewAdmin creates an admin client whose log lines go to log.
// confluent-kafka-go's NewAdminClient cannot route logs (it refuses
// go.logs.channel.enable), so the admin client is derived from a producer
// that can, as librdkafka's own admin clients are producers.
func NewAdmin(log *slog.Logger, cm kafka.ConfigMap) (*Admin, error) {
	cm = clone(cm)
	// The producer never produces: no delivery reports, and small Go-side
	// channels instead of confluent-kafka-go's million-entry defaults.
	for k, v := range map[string]any{"go.delivery.reports": false, "go.produce.channel.size": 0, "go.events.channel.size": 100} {
		if _, set := cm[k]; !set {
			cm[k] = v
		}
	}
	p, err := NewProducer(log, cm)
	if err != nil {
		return nil, err
	}
	// Errors (brokers down, authentication) also arrive as events; the
	// log lines already say the same, and an undrained channel would stall
	// the producer's event poller.
	go func() {
		for range p.Events() {
		}
	}()
	a, err := kafka.NewAdminClientFromProducer(p)
	if err != nil {
		p.Close()
		return nil, err
	}
	return &Admin{AdminClient: a, p: p}, nil
}

// Close closes the admin client and its producer.
func (a *Admin) Close() {
	a.AdminClient.Close()
	a.p.Close()
}

func clone(cm kafka.ConfigMap) kafka.ConfigMap {
	out := make(kafka.ConfigMap, len(cm)+2)
	for k, v := range cm {
		out[k] = v
	}
	return out
}
