//go:build linux && cgo

// See doc.go for why this file defines poll.

#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <time.h>

#define CONNECTD_IDLE_POLLS_BEFORE_WAIT 2

// 0 until the process sets it (SetWaitMillis): poll is then plain ppoll.
static int connectd_wait_ms;
static __thread unsigned int connectd_idle_polls;
static unsigned long connectd_calls;
static unsigned long connectd_waits;
static __thread unsigned long connectd_thread_waits;

int poll(struct pollfd *fds, nfds_t nfds, int timeout) {
	int wait = timeout;
	int wait_ms = __atomic_load_n(&connectd_wait_ms, __ATOMIC_RELAXED);
	__atomic_add_fetch(&connectd_calls, 1, __ATOMIC_RELAXED);
	if (timeout == 0 && wait_ms > 0 &&
	    connectd_idle_polls >= CONNECTD_IDLE_POLLS_BEFORE_WAIT) {
		wait = wait_ms;
		__atomic_add_fetch(&connectd_waits, 1, __ATOMIC_RELAXED);
		connectd_thread_waits++;
	}
	struct timespec ts, *tsp = NULL;
	if (wait >= 0) {
		ts.tv_sec = wait / 1000;
		ts.tv_nsec = (long)(wait % 1000) * 1000000L;
		tsp = &ts;
	}
	int r = ppoll(fds, nfds, tsp, NULL);
	if (timeout == 0 && r == 0) {
		connectd_idle_polls++;
	} else {
		connectd_idle_polls = 0;
	}
	return r;
}

void connectd_brokerpoll_set_wait_ms(int ms) { __atomic_store_n(&connectd_wait_ms, ms, __ATOMIC_RELAXED); }
int connectd_brokerpoll_wait_ms(void) { return __atomic_load_n(&connectd_wait_ms, __ATOMIC_RELAXED); }
unsigned long connectd_brokerpoll_calls(void) { return __atomic_load_n(&connectd_calls, __ATOMIC_RELAXED); }
unsigned long connectd_brokerpoll_waits(void) { return __atomic_load_n(&connectd_waits, __ATOMIC_RELAXED); }
unsigned long connectd_brokerpoll_thread_waits(void) { return connectd_thread_waits; }
