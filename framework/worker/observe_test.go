package worker_test

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/connectd/connectd/framework/worker"
	"github.com/connectd/connectd/internal/kafkatest"
)

// A killed plugin process shows in the metrics: connectd_plugin_process_up
// drops to 0, and when the task restarts the relaunch is counted in
// connectd_plugin_process_restarts_total and up is 1 again. The worker's
// whole registry passes promlint throughout.
func TestPluginProcessMetrics(t *testing.T) {
	e := newEnv(t)
	topic := kafkatest.Topic(t)
	name := kafkatest.UniqueName(t, "c")
	cfg := e.config(true)
	cfg.RestartBackoffInitial = 3 * time.Second // long enough to see the process down
	w, st := e.start(cfg)
	e.run(w, name, datagenProps(topic, 1, 100_000_000))
	st.waitFor(t, name+"-0", worker.StateRunning, time.Minute)
	lint(t, cfg)
	conn := map[string]string{"connector": name}
	if up, restarts := metricSum(t, cfg, "connectd_plugin_process_up", conn), metricSum(t, cfg, "connectd_plugin_process_restarts_total", conn); up != 1 || restarts != 0 {
		t.Fatalf("before the kill: up %v, restarts %v", up, restarts)
	}
	procs := w.PluginProcesses()
	if len(procs) != 1 || procs[0].Connector != "" || !slices.Equal(procs[0].Conns, []string{name}) {
		t.Fatalf("plugin processes: %+v", procs)
	}
	if err := syscall.Kill(procs[0].Process.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		up := metricSum(t, cfg, "connectd_plugin_process_up", conn)
		return up == 0, fmt.Sprintf("connectd_plugin_process_up = %v after the kill", up)
	})
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		up, restarts := metricSum(t, cfg, "connectd_plugin_process_up", conn), metricSum(t, cfg, "connectd_plugin_process_restarts_total", conn)
		return up == 1 && restarts == 1, fmt.Sprintf("up %v, restarts %v", up, restarts)
	})
	// The plugin process is relaunched before the task's own restart
	// backoff ends, so the task's counters follow a little later. Both
	// incarnations of the task start; the environment's workers share the
	// registry, so other tests' starts may add to the startup count.
	kafkatest.Eventually(t, time.Minute, func() (bool, string) {
		restarts := metricSum(t, cfg, "connectd_task_restarts_total", conn)
		startups := metricSum(t, cfg, "connectd_worker_task_startups_total", map[string]string{"result": "success"})
		return restarts >= 1 && startups >= 2, fmt.Sprintf("connectd_task_restarts_total = %v, connectd_worker_task_startups_total{result=success} = %v after the plugin died", restarts, startups)
	})
	st.waitFor(t, name+"-0", worker.StateRunning, time.Minute)
	lint(t, cfg)
}

func lint(t *testing.T, cfg worker.Config) {
	t.Helper()
	fams, err := cfg.Metrics.(prometheus.Gatherer).Gather()
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.NewWithMetricFamilies(fams).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}
