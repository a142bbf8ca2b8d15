// Package worker runs the connectors and tasks assigned to this process:
// the task runners, their lifecycle, and error handling with the
// dead-letter queue. The herder (framework/herder) decides what runs
// where and calls the Worker API; the plugins run in their own processes
// (plugins/host), one per connector on this worker.
//
// # Exactly-once source tasks
//
// With exactly-once source support (Config.ExactlyOnceSource) each source
// task owns one transactional producer, transactional.id
// ${group.id}-${connector}-${task}. InitTransactions at start fences the
// task's predecessor and aborts its open transaction; only then are the
// committed offsets read (read_committed) and the plugin task started
// with them. Per transaction the records (after the plugin's converters
// and transforms), the dead-letter copies of failed records, and the
// offset records (offsets package format) go through that producer, then
// CommitTransaction, and only then does the plugin's SourceTask.Commit
// hear about the offsets. transaction.boundary is poll (a transaction per
// poll batch), interval (transaction.boundary.interval.ms) or connector
// (the task's TransactionContext). The plugin polls ahead by its credits
// and a fetcher goroutine prepares the next batch while a commit is in
// flight, so fetching and committing overlap.
//
// A produce or commit error that requires an abort aborts the
// transaction and resumes from the committed offsets with a fresh plugin
// task. A fenced (or otherwise fatal) producer stops the task FAILED and
// it is not restarted automatically: a zombie must not fight its
// successor for the transactional id. The exception is a fenced or
// fatally failed task the cluster still assigns to this worker
// (Config.OwnsTask): it has no successor — the transaction coordinator
// aborted a transaction that outlived transaction.timeout.ms, as a broker
// outage causes, or an abort after a plugin crash failed fatally — and it
// is restarted like any failure, with a new producer.
//
// # At-least-once source tasks
//
// Without exactly-once support a task produces with an idempotent
// producer; every offset.flush.interval.ms the offsets of the poll
// batches whose records (and dead-letter copies) are all acknowledged are
// written to the offsets topic, then reported to the plugin.
//
// # Source topics
//
// Before a poll batch is produced, the topics it names that the task has
// not written to yet are described in one admin request (the connector's
// admin client). Missing ones are created with the connector's
// topic.creation.* settings (KIP-158: the first group of
// topic.creation.groups that includes and does not exclude the name,
// else the default group) when the worker's topic.creation.enable is true
// and the connector has such settings; otherwise, unless the brokers
// auto-create topics, the task fails naming the topic (MissingTopicError),
// as it does when the broker refuses the creation (TopicCreateError), and
// the failure counts in the KAFKA_PRODUCE record errors. In exactly-once
// mode this happens before the batch's records join the transaction.
//
// # Sink tasks
//
// A sink task consumes with group connect-<connector>, read_committed and
// cooperative-sticky assignment; puts run in the background while the
// consumer keeps polling, and partitions are paused when consumed records
// pile up (back-pressure) or while a retriable put error backs off. The
// consumer commits exactly the offsets the task's Flush returns, never
// beyond what was put, and only after the dead-letter records they cover
// are acknowledged; on revocation the partitions are flushed and
// committed before they are given up.
//
// # Errors
//
// errors.tolerance, errors.retry.timeout, errors.retry.delay.max.ms,
// errors.log.enable, errors.log.include.messages and
// errors.deadletterqueue.* apply to converter and transform failures the
// plugin reports (source and sink), to records a sink task reports from
// Put, and to records above the producer's message.max.bytes. Unlike
// Kafka Connect, source connectors may have a dead-letter queue; in
// exactly-once mode its records join the task's transaction.
//
// # Lifecycle
//
// Tasks go through Kafka Connect's states (UNASSIGNED, RUNNING, PAUSED,
// FAILED, RESTARTING); failed tasks and connectors are restarted
// automatically with exponential backoff (Kafka Connect never does),
// keeping the failure's trace. Every change goes to the StatusListener.
// Metrics (prefix connectd_, labels connector and task) go to
// Config.Metrics; every log line of a task carries connector and task.
//
// What this package must not do: decide assignments, write the config or
// status topics, or serve REST; those are the herder's and the REST
// layer's. It also must not run connector code in-process: plugins do.
//
// Deviations from the lead's contract: Config gains CommonProps,
// OffsetsPartitions, DisableAutoRestart and SinkBatchRecords; Worker gains
// TaskStatus; OverridePolicy knows None, Principal and All (no Allowlist
// yet); FenceZombies initialises producers with each transactional id
// because confluent-kafka-go has no Admin.FenceProducers.
//
// Limits: a fenced or otherwise fatal transactional producer stops its
// task without automatic restart unless the cluster still assigns the task
// here, so a zombie task (frozen past its session, its work reassigned)
// stays FAILED until restarted. errors.tolerance covers records above the
// producer's message.max.bytes; a record the broker refuses later (a
// topic max.message.bytes below the producer's limit) aborts the
// transaction, and after repeated aborts the task fails naming the error.
package worker
