//go:build linux && cgo

// See doc.go for why this file defines poll.

#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

// Keep in step with doc.go's DefaultNapMillis and EnvVar.
#define CONNECTD_DEFAULT_NAP_MS 1
#define CONNECTD_MAX_NAP_MS 10
#define CONNECTD_IDLE_POLLS_BEFORE_NAP 2

static int connectd_nap_ms = CONNECTD_DEFAULT_NAP_MS;
static __thread unsigned int connectd_idle_polls;
static unsigned long connectd_calls;
static unsigned long connectd_naps;
static __thread unsigned long connectd_thread_naps;

__attribute__((constructor)) static void connectd_brokerpoll_init(void) {
	const char *v = getenv("CONNECTD_RDKAFKA_POLL_NAP_MS");
	if (v != NULL && *v != '\0') {
		char *end;
		long ms = strtol(v, &end, 10);
		if (*end == '\0' && ms >= 0) {
			connectd_nap_ms = ms > CONNECTD_MAX_NAP_MS ? CONNECTD_MAX_NAP_MS : (int)ms;
		}
	}
}

int poll(struct pollfd *fds, nfds_t nfds, int timeout) {
	int wait = timeout;
	__atomic_add_fetch(&connectd_calls, 1, __ATOMIC_RELAXED);
	if (timeout == 0 && connectd_nap_ms > 0 &&
	    connectd_idle_polls >= CONNECTD_IDLE_POLLS_BEFORE_NAP) {
		wait = connectd_nap_ms;
		__atomic_add_fetch(&connectd_naps, 1, __ATOMIC_RELAXED);
		connectd_thread_naps++;
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

int connectd_brokerpoll_nap_ms(void) { return connectd_nap_ms; }
unsigned long connectd_brokerpoll_calls(void) { return __atomic_load_n(&connectd_calls, __ATOMIC_RELAXED); }
unsigned long connectd_brokerpoll_naps(void) { return __atomic_load_n(&connectd_naps, __ATOMIC_RELAXED); }
unsigned long connectd_brokerpoll_thread_naps(void) { return connectd_thread_naps; }
