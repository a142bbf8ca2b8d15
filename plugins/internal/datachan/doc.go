// Package datachan is the data channel of the plugin protocol (version 4): the
// task streams of one plugin process (source and sink tasks, any number)
// multiplexed over one connected socketpair that the host creates and
// only that plugin process inherits.
//
// It owns the framing (a 13-byte header: body length, stream id, type,
// meta length; see frame.go), the stream lifecycle (the host opens and
// resets, the plugin ends with an optional error), a hard cap on frame
// size checked before anything is allocated, and one writer per direction:
// the sender that finds the channel idle writes, and writes whatever small
// frames other senders queued meanwhile in the same writev (no writer
// goroutine, so an idle channel costs a send no hand-off). Large parts are
// written from the sender's memory, and each frame's bulk is read into a
// buffer of its own that the receiver keeps: a batch's records are slices
// of it, never copied again.
//
// Flow control is the protocol's: the task streams' credits bound what a
// peer may send, and the receiving side rejects what exceeds them. The
// goroutine reading the channel never waits for a consumer (each stream
// queues what arrived, or hands it to a handler that must not block:
// Stream.Handle), so one slow task cannot stall the others; a writer that
// makes no progress within the write timeout fails the channel.
//
// Every goroutine that a message wakes on its way costs a thread wake-up,
// which is most of a round trip's fixed cost between two processes. So
// the channel has no fixed reading goroutine: one goroutine at a time
// reads the socket, the holder of a reading role, and a goroutine that
// waits for a message takes the role when nobody holds it and reads
// itself (Conn.Await, Stream.Recv, Stream.AwaitMessage), dispatching what
// arrives for every stream. The message it waits for then wakes it
// straight from the network poller, as a plain blocking read would. The
// channel's own goroutine reads only after waiters have left the socket
// alone for a few milliseconds, so that what arrives unasked for (a
// stream's end, the peer's failure) is still handled, and gives the role
// up between two frames as soon as a waiter wants it. A consumer that never blocks takes messages where
// they are read (Handle). On Linux the socket's reads and writes skip the
// runtime's system call bookkeeping (rawio_linux.go), which would wake
// the runtime's monitor thread on every round trip.
//
// It must not interpret messages (plugins/internal/wire decodes them) or
// decide what a failure means for a task (plugins and plugins/host do).
//
// Why no TLS: the control calls run through go-plugin's AutoMTLS gRPC
// connection, because that connection is a Unix socket with a path that
// other local processes can try to connect to. The data channel has
// no name: socketpair(2) returns two already connected ends, both
// close-on-exec; the host hands one to exactly one child with
// exec.Cmd.ExtraFiles and closes its copy, and the plugin duplicates it
// close-on-exec and closes the inherited descriptor, so no process the
// connector starts inherits it. Nothing can connect to it, and reading it
// would take the rights to read either process's memory (ptrace or
// pidfd_getfd as the same user or root), which would defeat TLS as well,
// since its keys are in that memory. The host still treats every byte
// from the plugin as untrusted input: frame sizes are capped, stream ids
// checked, messages and packed records validated.
package datachan
