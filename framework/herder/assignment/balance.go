package assignment

import (
	"sort"

	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
)

// ConnectorTask marks the connector instance itself in an Item (Kafka's
// CONNECTOR_TASK = -1).
const ConnectorTask = -1

// Item is a unit of work: a connector instance (Task == ConnectorTask) or
// a task.
type Item = api.ConnectorTaskID

// ConnectorItem is the item of the connector instance itself.
func ConnectorItem(name string) Item { return Item{Connector: name, Task: ConnectorTask} }

// IsConnector reports whether the item is a connector instance.
func IsConnector(it Item) bool { return it.Task == ConnectorTask }

// String names the item for logs.
func String(it Item) string {
	if IsConnector(it) {
		return "connector " + it.Connector
	}
	return "task " + it.String()
}

// Balance decides the owner of every item among workers (sorted URLs),
// sticky and balanced: an item keeps its previous owner while that worker
// is in workers; unowned items go to the least-loaded worker; then items
// move from the most- to the least-loaded worker until loads differ by at
// most one. Connectors and tasks are balanced separately, as Kafka
// Connect's assignor does. The result is deterministic for given inputs.
func Balance(items []Item, workers []string, prev map[Item]string) map[Item]string {
	out := make(map[Item]string, len(items))
	if len(workers) == 0 {
		return out
	}
	var conns, tasks []Item
	for _, it := range items {
		if IsConnector(it) {
			conns = append(conns, it)
		} else {
			tasks = append(tasks, it)
		}
	}
	balanceKind(conns, workers, prev, out)
	balanceKind(tasks, workers, prev, out)
	return out
}

func balanceKind(items []Item, workers []string, prev map[Item]string, out map[Item]string) {
	sort.Slice(items, func(i, j int) bool { return clusterstate.TaskLess(items[i], items[j]) })
	live := make(map[string]bool, len(workers))
	owned := make(map[string][]Item, len(workers))
	for _, w := range workers {
		live[w] = true
	}
	var unowned []Item
	for _, it := range items {
		if w, ok := prev[it]; ok && live[w] {
			owned[w] = append(owned[w], it)
		} else {
			unowned = append(unowned, it)
		}
	}
	least := func() string {
		best := workers[0]
		for _, w := range workers[1:] {
			if len(owned[w]) < len(owned[best]) {
				best = w
			}
		}
		return best
	}
	most := func() string {
		best := workers[0]
		for _, w := range workers[1:] {
			if len(owned[w]) > len(owned[best]) {
				best = w
			}
		}
		return best
	}
	for _, it := range unowned {
		w := least()
		owned[w] = append(owned[w], it)
	}
	for {
		hi, lo := most(), least()
		if len(owned[hi])-len(owned[lo]) <= 1 {
			break
		}
		// Move the hi worker's last item (owned lists keep items sorted
		// within each phase, so this is its highest-numbered work).
		list := owned[hi]
		sort.Slice(list, func(i, j int) bool { return clusterstate.TaskLess(list[i], list[j]) })
		it := list[len(list)-1]
		owned[hi] = list[:len(list)-1]
		owned[lo] = append(owned[lo], it)
	}
	for w, list := range owned {
		for _, it := range list {
			out[it] = w
		}
	}
}

// OwnersOf flattens an assignment into item -> worker URL.
func OwnersOf(a *clusterstate.Assignment) map[Item]string {
	out := map[Item]string{}
	if a == nil {
		return out
	}
	for url, w := range a.Workers {
		for _, c := range w.Connectors {
			out[Item{Connector: c, Task: ConnectorTask}] = url
		}
		for c, ns := range w.Tasks {
			for _, n := range ns {
				out[Item{Connector: c, Task: n}] = url
			}
		}
	}
	return out
}

// buildWorkers turns item -> worker into the record's per-worker form.
// Every worker in workers gets an entry, even an empty one, so that a
// worker can tell "nothing for me" from "not yet assigned".
func buildWorkers(owners map[Item]string, workers []string) map[string]clusterstate.WorkerAssignment {
	out := make(map[string]clusterstate.WorkerAssignment, len(workers))
	for _, w := range workers {
		out[w] = clusterstate.WorkerAssignment{Connectors: []string{}, Tasks: map[string][]int{}}
	}
	var items []Item
	for it := range owners {
		items = append(items, it)
	}
	sort.Slice(items, func(i, j int) bool { return clusterstate.TaskLess(items[i], items[j]) })
	for _, it := range items {
		url := owners[it]
		wa, ok := out[url]
		if !ok {
			wa = clusterstate.WorkerAssignment{Connectors: []string{}, Tasks: map[string][]int{}}
		}
		if IsConnector(it) {
			wa.Connectors = append(wa.Connectors, it.Connector)
		} else {
			wa.Tasks[it.Connector] = append(wa.Tasks[it.Connector], it.Task)
		}
		out[url] = wa
	}
	return out
}

// Items lists every connector instance and task the snapshot defines.
func Items(s *clusterstate.Snapshot) []Item {
	var out []Item
	for _, c := range s.Connectors() {
		out = append(out, Item{Connector: c, Task: ConnectorTask})
		for i := range s.TaskConfigs(c) {
			out = append(out, Item{Connector: c, Task: i})
		}
	}
	return out
}
