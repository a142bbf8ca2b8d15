//go:build linux && cgo

package brokerpoll

/*
#include <poll.h>

int connectd_brokerpoll_nap_ms(void);
unsigned long connectd_brokerpoll_calls(void);
unsigned long connectd_brokerpoll_naps(void);
unsigned long connectd_brokerpoll_thread_naps(void);
*/
import "C"

// NapMillis is how long a zero-timeout poll that follows two empty ones
// waits in this process: DefaultNapMillis unless EnvVar set it; 0 when the
// replacement is off (and on other platforms).
func NapMillis() int { return int(C.connectd_brokerpoll_nap_ms()) }

// Active reports whether poll is replaced in this process.
func Active() bool { return true }

// Calls is the number of poll calls made in this process since it started,
// by librdkafka or anything else that calls the C library's poll.
func Calls() uint64 { return uint64(C.connectd_brokerpoll_calls()) }

// Naps is the number of those calls that were given the wait instead of a
// zero timeout: the busy polls avoided.
func Naps() uint64 { return uint64(C.connectd_brokerpoll_naps()) }

// pollIn polls fd for input through the C library's poll, as librdkafka
// does (for tests).
func pollIn(fd int, timeoutMillis int) int {
	pfd := C.struct_pollfd{fd: C.int(fd), events: C.POLLIN}
	return int(C.poll(&pfd, 1, C.int(timeoutMillis)))
}

// threadNaps is Naps for the calling thread only (for tests).
func threadNaps() uint64 { return uint64(C.connectd_brokerpoll_thread_naps()) }
