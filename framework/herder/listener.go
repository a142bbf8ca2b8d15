package herder

import (
	"github.com/connectd/connectd/framework/herder/assignment"
	"github.com/connectd/connectd/framework/worker"
)

// The herder is the runtime's StatusListener: every state change of a
// connector or task this worker runs becomes a status record, stamped with
// this worker's id and the generation of the assignment it applied last.
//
// A report about work the applied assignment does not give this worker is
// dropped (only UNASSIGNED passes, and only while nobody else owns the
// item): it comes from work being stopped after a move, and the new
// owner's status must not be overwritten.

// ConnectorState records a connector's state.
func (h *Herder) ConnectorState(name string, s State, trace string) {
	it := assignment.Item{Connector: name, Task: assignment.ConnectorTask}
	if !h.reportable(it, string(s)) {
		return
	}
	h.statuses.putConnector(name, h.withVersion(name, h.local.status(string(s), h.scrub(name, trace))))
}

// TaskState records a task's state.
func (h *Herder) TaskState(id TaskID, s State, trace string) {
	it := fromRuntimeID(id)
	if !h.reportable(it, string(s)) {
		return
	}
	h.statuses.putTask(it, h.withVersion(it.Connector, h.local.status(string(s), h.scrub(it.Connector, trace))))
}

// TopicActive records that a task produced to or consumed from a topic
// (topic tracking, KIP-558).
func (h *Herder) TopicActive(id TaskID, topic string) {
	if !h.cfg.TopicTracking || h.statuses == nil || h.statuses.hasTopic(id.Connector, topic) {
		return
	}
	if !h.configs.Snapshot().Contains(id.Connector) {
		return
	}
	h.statuses.putTopic(id.Connector, id.Task, topic)
}

// pluginVersioner is implemented by runtimes that know which plugin version
// a connector's process runs (*worker.Worker does).
type pluginVersioner interface {
	PluginVersion(connector string) string
}

// withVersion stamps a status with the plugin version the connector runs
// on this worker, so that the status topic tells every worker (KIP-891).
func (h *Herder) withVersion(connector string, st Status) Status {
	if pv, ok := h.rt.(pluginVersioner); ok {
		st.Version = pv.PluginVersion(connector)
	}
	return st
}

func (h *Herder) reportable(it assignment.Item, state string) bool {
	if h.local == nil || h.statuses == nil {
		return false
	}
	snap := h.configs.Snapshot()
	if !snap.Contains(it.Connector) {
		return false // deleted: its statuses were tombstoned
	}
	if h.local.owns(it) {
		return true
	}
	if state != StateUnassigned {
		return false
	}
	a := snap.Assignment()
	if assignment.IsConnector(it) {
		_, owned := a.OwnerOfConnector(it.Connector)
		return !owned
	}
	_, owned := a.OwnerOfTask(it)
	return !owned
}

var _ worker.TopicListener = (*Herder)(nil)
