package herder

import (
	"sort"

	"github.com/connectd/connectd/framework/herder/clusterstate"
	"github.com/connectd/connectd/framework/rest/api"
)

// connectorItem marks the connector instance itself in an item (Kafka's
// CONNECTOR_TASK = -1).
const connectorItem = -1

// item is a unit of work: a connector instance (Task == connectorItem) or a
// task.
type item = api.ConnectorTaskID

func isConnector(it item) bool { return it.Task == connectorItem }

// balance decides the owner of every item among workers (sorted URLs),
// sticky and balanced: an item keeps its previous owner while that worker
// is in workers; unowned items go to the least-loaded worker; then items
// move from the most- to the least-loaded worker until loads differ by at
// most one. Connectors and tasks are balanced separately, as Kafka
// Connect's assignor does. The result is deterministic for given inputs.
func balance(items []item, workers []string, prev map[item]string) map[item]string {
	out := make(map[item]string, len(items))
	if len(workers) == 0 {
		return out
	}
	var conns, tasks []item
	for _, it := range items {
		if isConnector(it) {
			conns = append(conns, it)
		} else {
			tasks = append(tasks, it)
		}
	}
	balanceKind(conns, workers, prev, out)
	balanceKind(tasks, workers, prev, out)
	return out
}

func balanceKind(items []item, workers []string, prev map[item]string, out map[item]string) {
	sort.Slice(items, func(i, j int) bool { return clusterstate.TaskLess(items[i], items[j]) })
	live := make(map[string]bool, len(workers))
	owned := make(map[string][]item, len(workers))
	for _, w := range workers {
		live[w] = true
	}
	var unowned []item
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

// ownersOf flattens an assignment into item -> worker URL.
func ownersOf(a *clusterstate.Assignment) map[item]string {
	out := map[item]string{}
	if a == nil {
		return out
	}
	for url, w := range a.Workers {
		for _, c := range w.Connectors {
			out[item{Connector: c, Task: connectorItem}] = url
		}
		for c, ns := range w.Tasks {
			for _, n := range ns {
				out[item{Connector: c, Task: n}] = url
			}
		}
	}
	return out
}

// buildAssignment turns item -> worker into the record's per-worker form.
// Every worker in workers gets an entry, even an empty one, so that a
// worker can tell "nothing for me" from "not yet assigned".
func buildAssignment(owners map[item]string, workers []string) map[string]clusterstate.WorkerAssignment {
	out := make(map[string]clusterstate.WorkerAssignment, len(workers))
	for _, w := range workers {
		out[w] = clusterstate.WorkerAssignment{Connectors: []string{}, Tasks: map[string][]int{}}
	}
	var items []item
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
		if isConnector(it) {
			wa.Connectors = append(wa.Connectors, it.Connector)
		} else {
			wa.Tasks[it.Connector] = append(wa.Tasks[it.Connector], it.Task)
		}
		out[url] = wa
	}
	return out
}

// itemsOf lists every connector instance and task the snapshot defines.
func itemsOf(s *clusterstate.Snapshot) []item {
	var out []item
	for _, c := range s.Connectors() {
		out = append(out, item{Connector: c, Task: connectorItem})
		for i := range s.TaskConfigs(c) {
			out = append(out, item{Connector: c, Task: i})
		}
	}
	return out
}
