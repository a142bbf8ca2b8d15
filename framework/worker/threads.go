package worker

import "runtime"

// threadsPerRuntime is how many OS threads a task or connector instance
// may have added to the process: Go's runtime starts a thread for every
// goroutine blocked in a system or cgo call at the same time, and a task
// keeps several there (librdkafka's poll loops, the plugin's data
// channel).
const threadsPerRuntime = 3

// releaseThreads lets up to n idle OS threads of the Go runtime exit. The
// runtime never ends a thread it started (golang.org/issue/14592): after
// the tasks that needed them stop, the threads idle forever, and a worker
// that ran and then deleted hundreds of connectors kept hundreds of them.
// A goroutine that exits while locked to its thread takes that thread
// with it; the processor it ran on goes to an idle thread, or idles. A
// thread still in use never runs these goroutines, so releasing more
// than were idle costs at most a thread start each.
func releaseThreads(n int) {
	go func() {
		for range n {
			done := make(chan struct{})
			go func() {
				defer close(done)
				runtime.LockOSThread()
				// Returning without UnlockOSThread ends the thread.
			}()
			<-done
		}
	}()
}
