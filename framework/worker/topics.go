package worker

// TopicListener is the optional half of a StatusListener that records the
// topics each task writes to or reads from (topic tracking, KIP-558: GET
// /connectors/{c}/topics). The herder implements it; a listener without
// it gets no topic reports.
//
// TopicActive is called from a task's hot path, once per batch for every
// topic the batch touches, so it must be cheap when the topic is already
// recorded: the herder answers from its in-memory view of the status
// topic. Reporting per batch rather than once per task run is what lets a
// topic reset (PUT /connectors/{c}/topics/reset) fill the set again while
// the tasks keep running, as Kafka Connect does.
type TopicListener interface {
	TopicActive(id TaskID, topic string)
}

// topicReporter deduplicates one batch's topics before they reach the
// TopicListener: consecutive records of a batch nearly always share their
// topic, so comparing with the previous one avoids a call per record.
type topicReporter struct {
	l    TopicListener
	id   TaskID
	last string
}

func newTopicReporter(status StatusListener, id TaskID) topicReporter {
	l, _ := status.(TopicListener)
	return topicReporter{l: l, id: id}
}

// batch starts a new batch: its first record's topic is reported even if
// the previous batch ended with the same topic.
func (r *topicReporter) batch() { r.last = "" }

func (r *topicReporter) record(topic string) {
	if r.l == nil || topic == r.last || topic == "" {
		return
	}
	r.last = topic
	r.l.TopicActive(r.id, topic)
}
