package cluster

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/connectd/connectd/framework/herder"
	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
	"github.com/connectd/connectd/internal/kafkatest"
)

const sessionTimeout = 6 * time.Second

func loads(p map[string][]int) []int {
	var out []int
	for _, ts := range p {
		out = append(out, len(ts))
	}
	sort.Ints(out)
	return out
}

// Three workers spread a 6-task connector 2/2/2. A SIGKILLed worker's
// tasks run on the others within session.timeout.ms + 5 s. A worker that
// joins takes a fair share without restarting the tasks that stay. Through
// all of it the exactly-once output holds every record exactly once.
func TestSpreadFailoverAndJoin(t *testing.T) {
	c := newCluster(t, nil)
	w1, w2, w3 := c.start(), c.start(), c.start()
	ctx := ctxT(t, 5*time.Minute)
	out := kafkatest.Topic(t, kafkatest.Partitions(3))
	const perTask = 600 // about 15 s of output per task at max.interval=50
	cfg := datagenConfig(out, 6)
	cfg["iterations"] = fmt.Sprint(perTask)
	cfg["value.converter"] = "org.apache.kafka.connect.json.JsonConverter"
	cfg["value.converter.schemas.enable"] = "false"
	if _, err := w2.client().Create(ctx, "dg", cfg, ""); err != nil {
		t.Fatalf("create through %s: %v\n%s", w2.name, err, c.logs())
	}

	var place map[string][]int
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		p, why := placement(ctx, w1, "dg", 6)
		if p == nil {
			return false, why
		}
		place = p
		return slices.Equal(loads(p), []int{2, 2, 2}), fmt.Sprintf("placement %v", p)
	})
	t.Logf("placement: %v", place)

	// SIGKILL a worker that runs tasks (not necessarily the leader).
	victim := w3
	victimID := herder.WorkerID(victim.url)
	if len(place[victimID]) != 2 {
		t.Fatalf("victim %s runs %v", victimID, place[victimID])
	}
	killed := time.Now()
	victim.signal(syscall.SIGKILL)
	<-victim.exited
	var failover time.Duration
	kafkatest.Eventually(t, sessionTimeout+30*time.Second, func() (bool, string) {
		p, why := placement(ctx, w1, "dg", 6)
		if p == nil {
			return false, why
		}
		if _, ok := p[victimID]; ok {
			return false, fmt.Sprintf("tasks still on the killed worker: %v", p)
		}
		failover = time.Since(killed)
		place = p
		return true, ""
	})
	t.Logf("FAILOVER: all 6 tasks RUNNING on the surviving workers %v after SIGKILL (session.timeout.ms=%v; bound %v): %v",
		failover.Round(10*time.Millisecond), sessionTimeout, sessionTimeout+5*time.Second, place)
	if failover > sessionTimeout+5*time.Second {
		t.Fatalf("failover took %v, more than session timeout + 5 s\n%s", failover, c.logs())
	}
	if !slices.Equal(loads(place), []int{3, 3}) {
		t.Fatalf("after failover: %v, want 3/3", place)
	}
	if s := os.Getenv("CLUSTER_FAILOVER_OUT"); s != "" {
		f, err := os.OpenFile(s, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", failover.Milliseconds())
			f.Close()
		}
	}

	// A new worker joins: it takes 2 tasks; the 4 that stay are not
	// restarted.
	stay := map[string]map[int]int{}
	for _, w := range []*workerProc{w1, w2} {
		stay[herder.WorkerID(w.url)] = w.taskStarts("dg")
	}
	before := maps.Clone(place)
	w4 := c.start()
	w4ID := herder.WorkerID(w4.url)
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		p, why := placement(ctx, w1, "dg", 6)
		if p == nil {
			return false, why
		}
		place = p
		return slices.Equal(loads(p), []int{2, 2, 2}) && len(p[w4ID]) == 2, fmt.Sprintf("placement %v", p)
	})
	t.Logf("after join: %v", place)
	for _, w := range []*workerProc{w1, w2} {
		id := herder.WorkerID(w.url)
		now := w.taskStarts("dg")
		for _, task := range place[id] {
			if !slices.Contains(before[id], task) {
				t.Errorf("task %d moved onto %s, which was not the new worker", task, id)
				continue
			}
			if now[task] != stay[id][task] {
				t.Errorf("task %d stayed on %s but was restarted (%d starts before the join, %d after)", task, id, stay[id][task], now[task])
			}
		}
	}
	// Exactly once: every sequence number 0..6*perTask-1 once, none twice,
	// although a worker died with open transactions and tasks moved twice.
	var seqs map[int64]int
	kafkatest.Eventually(t, 120*time.Second, func() (bool, string) {
		seqs = counterSeqs(t, c.bootstrap, out)
		return len(seqs) == 6*perTask, fmt.Sprintf("%d of %d sequence numbers", len(seqs), 6*perTask)
	})
	for seq, n := range seqs {
		if n != 1 || seq < 0 || seq >= 6*perTask {
			t.Errorf("sequence number %d seen %d times", seq, n)
		}
	}
}

// A leader stopped (SIGSTOP) past its session loses the lead: another
// worker takes over and moves the stopped worker's tasks. After SIGCONT
// the old leader is fenced: none of its writes (assignments) commits, it
// follows the new leader's assignment and rejoins as a plain worker.
func TestLeaderStoppedPastSessionIsFenced(t *testing.T) {
	c := newCluster(t, nil)
	c.start()
	c.start()
	c.start()
	ctx := ctxT(t, 5*time.Minute)
	any := c.workers[0]
	if _, err := any.client().Create(ctx, "dg", datagenConfig(kafkatest.Topic(t, kafkatest.Partitions(3)), 6), ""); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		p, why := placement(ctx, any, "dg", 6)
		return p != nil && slices.Equal(loads(p), []int{2, 2, 2}), why + fmt.Sprint(p)
	})
	old := c.byURL(c.leaderURL(t))
	if old == nil {
		t.Fatal("leader is not one of the workers")
	}
	oldID := herder.WorkerID(old.url)
	var others []*workerProc
	for _, w := range c.workers {
		if w != old {
			others = append(others, w)
		}
	}
	genBefore := c.assignments(t)
	lastOld := genBefore[len(genBefore)-1].Generation

	old.signal(syscall.SIGSTOP)
	stopped := time.Now()
	// A new leader takes over and the stopped worker's tasks run
	// elsewhere.
	var newLeader string
	kafkatest.Eventually(t, sessionTimeout+30*time.Second, func() (bool, string) {
		as := c.assignments(t)
		a := as[len(as)-1]
		if a.Leader == old.url {
			return false, "assignment still from the old leader"
		}
		newLeader = a.Leader
		p, why := placement(ctx, others[0], "dg", 6)
		if p == nil {
			return false, why
		}
		if _, ok := p[oldID]; ok {
			return false, fmt.Sprintf("tasks still on the stopped leader: %v", p)
		}
		return true, ""
	})
	t.Logf("new leader %s; stopped leader's tasks running elsewhere %v after SIGSTOP", newLeader, time.Since(stopped).Round(10*time.Millisecond))
	takeover := c.assignments(t)
	firstNew := takeover[len(takeover)-1].Generation

	// Resume the old leader and immediately send it a write: it still
	// believes it leads until it notices, so the write exercises the
	// fenced path (or is forwarded if it noticed first).
	logBefore := len(old.log())
	old.signal(syscall.SIGCONT)
	cfg := datagenConfig(kafkatest.Topic(t), 1)
	if _, err := old.client().Create(ctx, "after-resume", cfg, ""); err != nil {
		t.Fatalf("write through the resumed old leader: %v\n%s", err, c.logs())
	}
	// The write is visible everywhere, through the new leader.
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		for _, w := range c.workers {
			names, err := w.client().Connectors(ctx)
			if err != nil || !slices.Contains(names, "after-resume") {
				return false, fmt.Sprintf("%s: %v %v", w.name, names, err)
			}
		}
		return true, ""
	})
	// The old worker rejoins as a plain member and gets its share of the
	// work again. Tasks are balanced over all connectors (after-resume's
	// task counts too, so dg's tasks alone need not go back to 2/2/2), and
	// connectors separately, as Kafka Connect's assignor does.
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		if p, why := placement(ctx, others[0], "dg", 6); p == nil {
			return false, why
		}
		as := c.assignments(t)
		a := as[len(as)-1]
		conns, tasks := map[string]int{}, map[string]int{}
		for url, wa := range a.Workers {
			conns[url], tasks[url] = len(wa.Connectors), len(wa.TaskIDs())
		}
		even := func(m map[string]int) bool {
			n := slices.Sorted(maps.Values(m))
			return len(n) == len(c.workers) && n[len(n)-1]-n[0] <= 1
		}
		return even(conns) && even(tasks) && tasks[old.url] > 0,
			fmt.Sprintf("generation %d: connectors %v, tasks %v per worker (old leader %s)", a.Generation, conns, tasks, old.url)
	})

	resumed := old.log()[logBefore:]
	as := c.assignments(t)
	for _, a := range as {
		if a.Generation > firstNew && a.Leader == old.url {
			t.Errorf("generation %d was written by the old leader after it was deposed", a.Generation)
		}
	}
	for i := 1; i < len(as); i++ {
		if as[i].Generation != as[i-1].Generation+1 {
			t.Errorf("assignment generations not consecutive: %d then %d", as[i-1].Generation, as[i].Generation)
		}
	}
	// Every task the old leader started after SIGCONT was given to it by
	// an assignment of the new leader.
	byGen := map[int32]clusterstate.Assignment{}
	for _, a := range as {
		byGen[a.Generation] = a
	}
	starts := taskStartsIn(resumed)
	if len(starts) == 0 {
		t.Error("the old leader started no task after rejoining, yet it runs two")
	}
	for _, st := range starts {
		a, ok := byGen[st.generation]
		if !ok || st.generation < firstNew || a.Leader == old.url || !slices.Contains(a.Workers[old.url].Tasks[st.connector], st.task) {
			t.Errorf("after SIGCONT the old leader started %s-%d under generation %d, which does not give it that task (new leader's first generation %d)",
				st.connector, st.task, st.generation, firstNew)
		}
	}
	if strings.Contains(resumed, `msg="assignment written"`) {
		t.Errorf("the old leader logged a committed assignment after SIGCONT:\n%s", resumed)
	}
	switch {
	case strings.Contains(resumed, "fenced from the config topic"):
		t.Logf("old leader (generation %d) tried to write after SIGCONT and was fenced (new leader's first generation %d)", lastOld, firstNew)
	case strings.Contains(resumed, "no longer owns the coordination partition"):
		t.Logf("old leader noticed it lost the group before writing (generation %d, new leader's first %d)", lastOld, firstNew)
	default:
		t.Errorf("the old leader shows no sign of stepping down after SIGCONT:\n%s", resumed)
	}
}

// Create, update and delete through each worker: writes on a non-leader
// are forwarded to the leader, reads are served everywhere.
func TestCRUDThroughEachWorker(t *testing.T) {
	c := newCluster(t, nil)
	c.start()
	c.start()
	c.start()
	ctx := ctxT(t, 5*time.Minute)
	t.Logf("%v workers started", time.Now().Format("15:04:05.000"))
	topic := kafkatest.Topic(t, kafkatest.Partitions(3))
	for i, w := range c.workers {
		name := fmt.Sprintf("c%d", i)
		info, err := w.client().Create(ctx, name, datagenConfig(topic, 1), "")
		if err != nil {
			t.Fatalf("create %s through %s: %v\n%s", name, w.name, err, c.logs())
		}
		if info.Name != name || info.Type != "source" {
			t.Fatalf("create answer %+v", info)
		}
	}
	t.Logf("%v created", time.Now().Format("15:04:05.000"))
	for i, w := range c.workers {
		name := fmt.Sprintf("c%d", (i+1)%3)
		cfg := datagenConfig(topic, 2)
		if _, _, err := w.client().PutConfig(ctx, name, cfg); err != nil {
			t.Fatalf("update %s through %s: %v", name, w.name, err)
		}
	}
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		for _, w := range c.workers {
			for i := 0; i < 3; i++ {
				name := fmt.Sprintf("c%d", i)
				p, why := placement(ctx, w, name, 2)
				if p == nil {
					return false, w.name + " " + name + ": " + why
				}
			}
		}
		return true, ""
	})
	t.Logf("%v updated and running", time.Now().Format("15:04:05.000"))
	// Creating an existing connector is a 409 that is not a rebalance.
	if _, err := c.workers[1].client().Create(ctx, "c0", datagenConfig(topic, 1), ""); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("duplicate create: %v", err)
	}
	for i, w := range c.workers {
		if err := w.client().Delete(ctx, fmt.Sprintf("c%d", (i+2)%3)); err != nil {
			t.Fatalf("delete through %s: %v", w.name, err)
		}
	}
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		for _, w := range c.workers {
			names, err := w.client().Connectors(ctx)
			if err != nil || len(names) != 0 {
				return false, fmt.Sprintf("%s lists %v %v", w.name, names, err)
			}
		}
		return true, ""
	})
}

// SIGTERM stops a worker gracefully within task.shutdown.graceful.timeout.ms
// plus a margin, exit code 0; its tasks move at once (it leaves the group,
// so nobody waits for its session to expire).
func TestGracefulShutdown(t *testing.T) {
	c := newCluster(t, nil)
	w1, w2 := c.start(), c.start()
	ctx := ctxT(t, 3*time.Minute)
	if _, err := w1.client().Create(ctx, "dg", datagenConfig(kafkatest.Topic(t, kafkatest.Partitions(3)), 4), ""); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		p, why := placement(ctx, w1, "dg", 4)
		return p != nil && slices.Equal(loads(p), []int{2, 2}), why + fmt.Sprint(p)
	})
	start := time.Now()
	w2.signal(syscall.SIGTERM)
	select {
	case <-w2.exited:
	case <-time.After(3*time.Second + 15*time.Second):
		t.Fatalf("worker did not exit within the graceful timeout + margin\n%s", w2.logTail(40))
	}
	took := time.Since(start)
	if w2.exitErr != nil {
		t.Fatalf("exit: %v\n%s", w2.exitErr, w2.logTail(30))
	}
	log := w2.log()
	for _, want := range []string{"stopping (signal received)", "left the cluster", "stopped in"} {
		if !strings.Contains(log, want) {
			t.Errorf("shutdown log lacks %q", want)
		}
	}
	gone := herder.WorkerID(w2.url)
	kafkatest.Eventually(t, 20*time.Second, func() (bool, string) {
		p, why := placement(ctx, w1, "dg", 4)
		if p == nil {
			return false, why
		}
		_, ok := p[gone]
		return !ok, fmt.Sprint(p)
	})
	moved := time.Since(start)
	t.Logf("graceful exit in %v; tasks running on the remaining worker %v after SIGTERM", took.Round(10*time.Millisecond), moved.Round(10*time.Millisecond))
	if moved > sessionTimeout {
		t.Errorf("tasks moved after %v: the leaving worker's session expiry was waited for", moved)
	}
}

// Bad worker.properties stop start-up with exit code 1 and one line that
// names what to change.
func TestBadWorkerProperties(t *testing.T) {
	c := newCluster(t, nil)
	admin := kafkatest.Admin(t)
	threePart := kafkatest.UniqueName(t, "cfg3")
	kafkatest.CreateTopic(t, threePart, kafkatest.Partitions(3), kafkatest.Config("cleanup.policy", "compact"))
	notCompacted := kafkatest.UniqueName(t, "st")
	kafkatest.CreateTopic(t, notCompacted, kafkatest.Partitions(5))
	_ = admin
	notDir := filepath.Join(t.TempDir(), "plugins-file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-plugins")
	for _, tc := range []struct {
		name   string
		change map[string]string
		want   []string
	}{
		{"missing group.id", map[string]string{"group.id": ""}, []string{"group.id"}},
		{"bad number", map[string]string{"session.timeout.ms": "6s"}, []string{"session.timeout.ms"}},
		{"bad enum", map[string]string{"exactly.once.source.support": "sometimes"}, []string{"exactly.once.source.support"}},
		{"config topic with 3 partitions", map[string]string{"config.storage.topic": threePart}, []string{threePart, "exactly 1", "config.storage.topic"}},
		{"status topic not compacted", map[string]string{"status.storage.topic": notCompacted}, []string{notCompacted, "cleanup.policy", "compact"}},
		{"unknown provider", map[string]string{"config.providers": "vault", "config.providers.vault.class": "com.example.Vault"}, []string{"config.providers.vault.class"}},
		{"unresolvable placeholder", map[string]string{"group.id": "${env:CONNECTD_SURELY_UNSET_VAR}"}, []string{"group.id", "CONNECTD_SURELY_UNSET_VAR"}},
		{"no plugin.path", map[string]string{"plugin.path": ""}, []string{"plugin.path"}},
		{"plugin.path does not exist", map[string]string{"plugin.path": missing}, []string{"plugin.path", missing, "does not exist"}},
		{"plugin.path entry is a file", map[string]string{"plugin.path": c.pluginDir + "," + notDir}, []string{"plugin.path", notDir, "not a directory"}},
		{"typo of exactly.once.source.support", map[string]string{"exactly.once.source.support": "", "exactly.once.source.suport": "enabled"},
			[]string{"exactly.once.source.suport", "did you mean exactly.once.source.support?"}},
		{"bad listener", map[string]string{"listeners": "ftp://127.0.0.1:1"}, []string{"listeners"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := c.props(freePort(t))
			for k, v := range tc.change {
				if v == "" {
					delete(props, k)
				} else {
					props[k] = v
				}
			}
			path := filepath.Join(t.TempDir(), "worker.properties")
			writeProps(t, path, props)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := execWorker(ctx, c.bin, path)
			code := exitCode(err)
			if code != 1 {
				t.Fatalf("exit code %d (%v), want 1\n%s", code, err, out)
			}
			last := lastLine(out)
			if !strings.HasPrefix(last, "connectd: ") {
				t.Fatalf("last line %q is not the one-line reason\n%s", last, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(last, w) {
					t.Errorf("reason %q does not mention %q", last, w)
				}
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		out, err := execWorker(context.Background(), c.bin, filepath.Join(t.TempDir(), "nope.properties"))
		if exitCode(err) != 1 || !strings.Contains(lastLine(out), "nope.properties") {
			t.Fatalf("%v\n%s", err, out)
		}
	})
	t.Run("no argument", func(t *testing.T) {
		out, err := execWorker(context.Background(), c.bin, "")
		if exitCode(err) != 2 {
			t.Fatalf("exit %v, want usage error 2\n%s", err, out)
		}
	})
	t.Run("unknown key warns by name and starts", func(t *testing.T) {
		port := freePort(t)
		props := c.props(port)
		props["sesion.timeout.ms"] = "6000"
		w := &workerProc{c: c, name: "typo", url: fmt.Sprintf("http://127.0.0.1:%d", port),
			props: filepath.Join(t.TempDir(), "typo.properties"), logPath: filepath.Join(t.TempDir(), "typo.log")}
		writeProps(t, w.props, props)
		w.launch()
		c.workers = append(c.workers, w)
		w.waitHealthy(60 * time.Second)
		if !strings.Contains(w.log(), "unknown worker property sesion.timeout.ms; did you mean session.timeout.ms?") {
			t.Fatalf("no warning naming the key\n%s", w.logTail(30))
		}
		// A connector config key typo is accepted, as Kafka Connect
		// does, and logged with the nearest key the connector defines.
		cfg := datagenConfig(kafkatest.Topic(t), 1)
		cfg["max.intervall"] = "50"
		if _, err := w.client().Create(ctxT(t, time.Minute), "typo", cfg, api.InitialStopped); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(w.log(), "unknown connector property max.intervall in connector typo; did you mean max.interval?") {
			t.Fatalf("no warning naming the connector key\n%s", w.logTail(30))
		}
		w.kill()
	})
}

// Config-provider placeholders stay in the stored configs and task configs
// (reverse-transformed) and are resolved only by the worker that runs the
// connector; the lifecycle operations (pause, resume, stop, offsets,
// restart, delete) work through any worker.
func TestSecretsAndLifecycle(t *testing.T) {
	c := newCluster(t, nil)
	w1, w2 := c.start(), c.start()
	ctx := ctxT(t, 5*time.Minute)
	out := kafkatest.Topic(t, kafkatest.Partitions(2))
	const secret = "s3cr3t-Value-9f2a1c"
	secrets := filepath.Join(c.dir, "secrets.properties")
	if err := os.WriteFile(secrets, []byte("topic="+out+"\npassword="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := datagenConfig("${file:"+secrets+":topic}", 2)
	cfg["datagen.secret"] = "${file:" + secrets + ":password}"
	cfg["value.converter"] = "org.apache.kafka.connect.json.JsonConverter"
	cfg["value.converter.schemas.enable"] = "false"

	res, err := w2.client().Validate(ctx, "DatagenSource", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fmt.Sprint(res), secret) {
		t.Fatalf("validate answer contains the resolved secret: %+v", res)
	}
	if _, err := w2.client().Create(ctx, "sec", cfg, ""); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 60*time.Second, func() (bool, string) {
		p, why := placement(ctx, w1, "sec", 2)
		return p != nil, why
	})
	// Stored with placeholders, tasks too.
	stored, err := w1.client().Config(ctx, "sec")
	if err != nil || stored["datagen.secret"] != cfg["datagen.secret"] || stored["kafka.topic"] != cfg["kafka.topic"] {
		t.Fatalf("stored config %v %v", stored, err)
	}
	tasks, err := w1.client().Tasks(ctx, "sec")
	if err != nil || len(tasks) != 2 {
		t.Fatalf("tasks %v %v", tasks, err)
	}
	for _, ti := range tasks {
		// datagen copies the connector config into its task configs: the
		// copies were turned back into placeholders before being stored.
		if ti.Config["datagen.secret"] != cfg["datagen.secret"] || ti.Config["kafka.topic"] != cfg["kafka.topic"] {
			t.Errorf("task %d config lost its placeholders: %v", ti.ID.Task, ti.Config)
		}
		for k, v := range ti.Config {
			if strings.Contains(v, secret) || (k == "kafka.topic" && v == out) {
				t.Errorf("task %d config %s holds a resolved value %q", ti.ID.Task, k, v)
			}
		}
	}
	// Resolved on the worker: the records land in the resolved topic.
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := len(counterSeqs(t, c.bootstrap, out))
		return n > 10, fmt.Sprintf("%d records in %s", n, out)
	})
	// The secret is nowhere in the config topic or the logs.
	eachRecord(t, c.bootstrap, c.topics[0], func(m *kafka.Message) {
		if strings.Contains(string(m.Value), secret) {
			t.Errorf("config topic record %s holds the resolved secret", m.Key)
		}
	})
	for _, w := range c.workers {
		if strings.Contains(w.log(), secret) {
			t.Errorf("%s logged the resolved secret", w.name)
		}
	}

	states := func(w *workerProc) (string, []string) {
		st, err := w.client().Status(ctx, "sec")
		if err != nil {
			return err.Error(), nil
		}
		var ts []string
		for _, x := range st.Tasks {
			ts = append(ts, x.State)
		}
		return st.Connector.State, ts
	}
	waitStates := func(conn string, task string, n int) {
		t.Helper()
		kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
			cs, ts := states(w2)
			if cs != conn || len(ts) != n {
				return false, fmt.Sprintf("%s %v", cs, ts)
			}
			for _, s := range ts {
				if s != task {
					return false, fmt.Sprintf("%s %v", cs, ts)
				}
			}
			return true, ""
		})
	}
	if err := w1.client().Pause(ctx, "sec"); err != nil {
		t.Fatal(err)
	}
	waitStates("PAUSED", "PAUSED", 2)
	if err := w2.client().Resume(ctx, "sec"); err != nil {
		t.Fatal(err)
	}
	waitStates("RUNNING", "RUNNING", 2)

	// Offsets can only change while the connector is STOPPED.
	patch := api.ConnectorOffsets{Offsets: []api.ConnectorOffset{{Partition: map[string]any{"task": 0}, Offset: map[string]any{"seq": 100000}}}}
	if _, err := w1.client().AlterOffsets(ctx, "sec", patch); err == nil || !strings.Contains(err.Error(), "STOPPED") {
		t.Fatalf("alter offsets while running: %v", err)
	}
	if err := w1.client().Stop(ctx, "sec"); err != nil {
		t.Fatal(err)
	}
	waitStates("STOPPED", "", 0)
	offs, err := w2.client().Offsets(ctx, "sec")
	if err != nil || len(offs.Offsets) != 2 {
		t.Fatalf("offsets of the stopped connector: %+v %v", offs, err)
	}
	msg, err := w2.client().AlterOffsets(ctx, "sec", patch)
	if err != nil || !strings.Contains(msg, "altered successfully") {
		t.Fatalf("alter offsets: %q %v", msg, err)
	}
	if err := w2.client().Resume(ctx, "sec"); err != nil {
		t.Fatal(err)
	}
	waitStates("RUNNING", "RUNNING", 2)
	// Task 0 resumes after the altered offset: datagen's next sequence
	// number is the committed one plus the task count.
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		return counterSeqs(t, c.bootstrap, out)[100002] == 1, "no record with seq 100002 yet"
	})

	// Reset: stop, delete offsets, nothing left.
	if err := w2.client().Stop(ctx, "sec"); err != nil {
		t.Fatal(err)
	}
	waitStates("STOPPED", "", 0)
	if msg, err := w1.client().ResetOffsets(ctx, "sec"); err != nil || !strings.Contains(msg, "reset successfully") {
		t.Fatalf("reset offsets: %q %v", msg, err)
	}
	if offs, err := w1.client().Offsets(ctx, "sec"); err != nil || len(offs.Offsets) != 0 {
		t.Fatalf("offsets after reset: %+v %v", offs, err)
	}
	if err := w1.client().Resume(ctx, "sec"); err != nil {
		t.Fatal(err)
	}
	waitStates("RUNNING", "RUNNING", 2)

	// Restart with tasks: the answer plans every task's restart.
	plan, err := w1.client().Restart(ctx, "sec", true, false)
	if err != nil || plan == nil || plan.Connector.State != "RESTARTING" || len(plan.Tasks) != 2 {
		t.Fatalf("restart plan %+v %v", plan, err)
	}
	waitStates("RUNNING", "RUNNING", 2)

	if err := w1.client().Delete(ctx, "sec"); err != nil {
		t.Fatal(err)
	}
	kafkatest.Eventually(t, 30*time.Second, func() (bool, string) {
		_, err := w2.client().Status(ctx, "sec")
		return err != nil && strings.Contains(err.Error(), "404"), fmt.Sprint(err)
	})
}
