package worker

import (
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/connectd/connectd/framework/sdk"
)

// collector reports what is read, not counted: the connectors' one-hot
// states and info, and whether each connector's plugin process is up. It
// reads the worker's maps at scrape time, so nothing on the hot path
// updates these series.
type collector struct {
	w *Worker

	connState *prometheus.Desc
	connInfo  *prometheus.Desc
	pluginUp  *prometheus.Desc

	mu        sync.Mutex
	manifests map[string]manifestInfo // by class
}

type manifestInfo struct {
	version, typ string
	read         time.Time
}

// manifestTTL bounds how stale connectd_connector_info's version may be
// after a plugin is installed again.
const manifestTTL = 30 * time.Second

func newCollector(w *Worker) *collector {
	return &collector{
		w: w,
		connState: prometheus.NewDesc("connectd_connector_state",
			"Connector instance state on this worker, one-hot: 1 for the current state (connector-metrics status).",
			[]string{"connector", "state"}, nil),
		connInfo: prometheus.NewDesc("connectd_connector_info",
			"Always 1 for each connector instance on this worker; labels give its class, type (source, sink) and plugin version.",
			[]string{"connector", "class", "type", "version"}, nil),
		pluginUp: prometheus.NewDesc("connectd_plugin_process_up",
			"1 while the plugin process the connector uses on this worker (its plugin's shared one, or its own) runs, 0 after it exited unexpectedly and before it is launched again.",
			[]string{"connector"}, nil),
		manifests: map[string]manifestInfo{},
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.connState
	ch <- c.connInfo
	ch <- c.pluginUp
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.w.mu.Lock()
	conns := make(map[string]*connectorRuntime, len(c.w.connectors))
	for name, cr := range c.w.connectors {
		conns[name] = cr
	}
	// Connectors with work here: a crashed process of a connector that
	// left this worker is no longer reported.
	here := make(map[string]bool, len(conns))
	for name := range conns {
		here[name] = true
	}
	for id := range c.w.tasks {
		here[id.Connector] = true
	}
	c.w.mu.Unlock()

	for name, cr := range conns {
		// currentState takes the connector's own lock, not under w.mu.
		state, class := cr.currentState(), cr.props["connector.class"]
		for _, st := range states {
			v := 0.0
			if st == state {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.connState, prometheus.GaugeValue, v, name, string(st))
		}
		mi := c.manifest(class)
		version := mi.version
		// Several versions may be installed: the label names the one
		// running.
		if v := c.w.PluginVersion(name); v != "" {
			version = v
		}
		ch <- prometheus.MustNewConstMetric(c.connInfo, prometheus.GaugeValue, 1, name, class, mi.typ, version)
	}
	// Each connector's process, once: during a version change a connector
	// may have two, and the live one wins.
	up := map[string]float64{}
	for _, e := range c.w.entries() {
		p := e.current.Load()
		if p == nil {
			continue
		}
		v := 1.0
		if exited(p) {
			v = 0
		}
		for _, name := range e.connectors() {
			if v == 0 && !here[name] {
				continue
			}
			up[name] = max(up[name], v)
		}
	}
	for name, v := range up {
		ch <- prometheus.MustNewConstMetric(c.pluginUp, prometheus.GaugeValue, v, name)
	}
}

// manifest returns the class's installed version and type, re-reading the
// catalog at most every manifestTTL.
func (c *collector) manifest(class string) manifestInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	if mi, ok := c.manifests[class]; ok && time.Since(mi.read) < manifestTTL {
		return mi
	}
	mi := manifestInfo{typ: "unknown", version: "unknown", read: time.Now()}
	if m, err := c.w.cfg.Plugins.Lookup(class); err == nil {
		mi.version = m.Version
		switch m.Type {
		case sdk.Source, sdk.Sink:
			mi.typ = string(m.Type)
		}
	}
	c.manifests[class] = mi
	return mi
}

// rdkafkaStats is the part of librdkafka's statistics JSON
// (statistics.interval.ms) the sink lag gauge reads.
type rdkafkaStats struct {
	Topics map[string]struct {
		Partitions map[string]struct {
			Partition   int32 `json:"partition"`
			ConsumerLag int64 `json:"consumer_lag"`
		} `json:"partitions"`
	} `json:"topics"`
}

// maxConsumerLag returns the largest consumer_lag among the partitions
// assigned reports true for; ok is false when none of them has a known lag
// (librdkafka reports -1 until it knows both the high watermark and the
// position).
func maxConsumerLag(statsJSON string, assigned func(topic string, partition int32) bool) (lag int64, ok bool) {
	var st rdkafkaStats
	if err := json.Unmarshal([]byte(statsJSON), &st); err != nil {
		return 0, false
	}
	for topic, t := range st.Topics {
		for key, p := range t.Partitions {
			part := p.Partition
			if n, err := strconv.ParseInt(key, 10, 32); err == nil {
				part = int32(n)
			}
			if part < 0 || p.ConsumerLag < 0 || !assigned(topic, part) {
				continue
			}
			if !ok || p.ConsumerLag > lag {
				lag, ok = p.ConsumerLag, true
			}
		}
	}
	return lag, ok
}
