package assignment

import (
	"fmt"
	"sort"
	"testing"

	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
)

func tasksOf(c string, n int) []Item {
	out := []Item{{Connector: c, Task: ConnectorTask}}
	for i := 0; i < n; i++ {
		out = append(out, Item{Connector: c, Task: i})
	}
	return out
}

func loads(owners map[Item]string, workers []string) (conns, tasks map[string]int) {
	conns, tasks = map[string]int{}, map[string]int{}
	for _, w := range workers {
		conns[w], tasks[w] = 0, 0
	}
	for it, w := range owners {
		if IsConnector(it) {
			conns[w]++
		} else {
			tasks[w]++
		}
	}
	return
}

func spread(m map[string]int) int {
	lo, hi := 1<<30, -1
	for _, n := range m {
		lo, hi = min(lo, n), max(hi, n)
	}
	return hi - lo
}

func TestBalanceSpreadsEvenly(t *testing.T) {
	workers := []string{"http://a:1", "http://b:1", "http://c:1"}
	owners := Balance(tasksOf("c1", 6), workers, nil)
	conns, tasks := loads(owners, workers)
	for _, w := range workers {
		if tasks[w] != 2 {
			t.Fatalf("want 2 tasks on each worker, got %v", tasks)
		}
	}
	if spread(conns) != 1 {
		t.Fatalf("connector loads %v", conns)
	}
}

func TestBalanceIsStickyOnJoin(t *testing.T) {
	three := []string{"http://a:1", "http://b:1", "http://c:1"}
	items := append(tasksOf("c1", 6), tasksOf("c2", 6)...)
	before := Balance(items, three, nil)
	four := append(append([]string(nil), three...), "http://d:1")
	after := Balance(items, four, before)
	_, tasks := loads(after, four)
	if spread(tasks) > 1 {
		t.Fatalf("unbalanced after join: %v", tasks)
	}
	moved := 0
	for it, w := range after {
		if before[it] != w {
			moved++
			if w != "http://d:1" {
				t.Errorf("%v moved between old workers %s -> %s", it, before[it], w)
			}
		}
	}
	// 12 tasks and 2 connectors over 4 workers: the newcomer takes 3
	// tasks (and no connector: 2 connectors over 4 workers is balanced).
	if moved != 3 {
		t.Fatalf("want exactly 3 items moved to the new worker, got %d", moved)
	}
}

func TestBalanceReassignsDeadWorkersWork(t *testing.T) {
	three := []string{"http://a:1", "http://b:1", "http://c:1"}
	items := tasksOf("c1", 6)
	before := Balance(items, three, nil)
	two := []string{"http://a:1", "http://c:1"}
	after := Balance(items, two, before)
	_, tasks := loads(after, two)
	if tasks["http://a:1"] != 3 || tasks["http://c:1"] != 3 {
		t.Fatalf("want 3/3, got %v", tasks)
	}
	for it, w := range before {
		if w != "http://b:1" && after[it] != w {
			t.Errorf("%v moved although its worker %s is alive", it, w)
		}
	}
}

func TestBalanceDeterministic(t *testing.T) {
	workers := []string{"http://a:1", "http://b:1", "http://c:1"}
	var items []Item
	for i := 0; i < 5; i++ {
		items = append(items, tasksOf(fmt.Sprintf("c%d", i), i+1)...)
	}
	a := Balance(items, workers, nil)
	for i := 0; i < 20; i++ {
		shuffled := append([]Item(nil), items...)
		sort.Slice(shuffled, func(i, j int) bool { return fmt.Sprint(shuffled[i]) > fmt.Sprint(shuffled[j]) })
		b := Balance(shuffled, workers, nil)
		for it, w := range a {
			if b[it] != w {
				t.Fatalf("balance is not deterministic: %v -> %s vs %s", it, w, b[it])
			}
		}
	}
}

func TestBuildAssignmentRoundTrip(t *testing.T) {
	workers := []string{"http://a:1", "http://b:1", "http://idle:1"}
	owners := map[Item]string{
		{Connector: "c1", Task: ConnectorTask}: "http://a:1",
		{Connector: "c1", Task: 0}:             "http://b:1",
		{Connector: "c1", Task: 1}:             "http://a:1",
	}
	a := &clusterstate.Assignment{Workers: buildWorkers(owners, workers)}
	if _, ok := a.Workers["http://idle:1"]; !ok {
		t.Fatal("idle worker has no entry")
	}
	back := OwnersOf(a)
	if len(back) != len(owners) {
		t.Fatalf("round trip: %v", back)
	}
	for it, w := range owners {
		if back[it] != w {
			t.Fatalf("round trip: %v -> %s, want %s", it, back[it], w)
		}
	}
	if u, ok := a.OwnerOfTask(api.ConnectorTaskID{Connector: "c1", Task: 1}); !ok || u != "http://a:1" {
		t.Fatalf("OwnerOfTask = %q %v", u, ok)
	}
	if u, ok := a.OwnerOfConnector("c1"); !ok || u != "http://a:1" {
		t.Fatalf("OwnerOfConnector = %q %v", u, ok)
	}
}
