//go:build linux && cgo

package brokerpoll

/*
#include <poll.h>

void connectd_brokerpoll_set_wait_ms(int ms);
int connectd_brokerpoll_wait_ms(void);
unsigned long connectd_brokerpoll_calls(void);
unsigned long connectd_brokerpoll_waits(void);
unsigned long connectd_brokerpoll_thread_waits(void);
*/
import "C"

import "fmt"

// SetWaitMillis sets how long a zero-timeout poll that follows two empty
// ones on the same thread waits instead, in milliseconds, for this whole
// process; 0 turns the wait off (poll then behaves as the C library's).
// It is 0 until called. Values outside 0..MaxWaitMillis are refused.
func SetWaitMillis(ms int) error {
	if ms < 0 || ms > MaxWaitMillis {
		return fmt.Errorf("busy-poll wait %d ms: want 0 to %d", ms, MaxWaitMillis)
	}
	C.connectd_brokerpoll_set_wait_ms(C.int(ms))
	return nil
}

// WaitMillis is the wait SetWaitMillis last set (0: off).
func WaitMillis() int { return int(C.connectd_brokerpoll_wait_ms()) }

// Active reports whether poll is replaced in this process.
func Active() bool { return true }

// Calls is the number of poll calls made in this process since it started,
// by librdkafka or anything else that calls the C library's poll.
func Calls() uint64 { return uint64(C.connectd_brokerpoll_calls()) }

// Waits is the number of those calls that were given the wait instead of a
// zero timeout: the busy polls avoided.
func Waits() uint64 { return uint64(C.connectd_brokerpoll_waits()) }

// pollIn polls fd for input through the C library's poll, as librdkafka
// does (for tests).
func pollIn(fd int, timeoutMillis int) int {
	pfd := C.struct_pollfd{fd: C.int(fd), events: C.POLLIN}
	return int(C.poll(&pfd, 1, C.int(timeoutMillis)))
}

// threadWaits is Waits for the calling thread only (for tests).
func threadWaits() uint64 { return uint64(C.connectd_brokerpoll_thread_waits()) }
