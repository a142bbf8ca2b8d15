package workerconfig

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// AdvertisedURL is the URL other workers use to reach this worker:
// bound[i] is the address listener i (c.Listeners[i]) actually bound. The
// listener is the first one with the rest.advertised.listener scheme (else
// the first one); rest.advertised.host.name and rest.advertised.port
// override its host and port. A listener on all interfaces is advertised
// with this machine's host name, as Kafka Connect does.
func (c *Config) AdvertisedURL(bound []string) (string, error) {
	idx := -1
	for i := range c.Listeners {
		if i >= len(bound) {
			break
		}
		scheme, _, _ := strings.Cut(c.Listeners[i], "://")
		if c.AdvertisedListener == "" || strings.EqualFold(scheme, c.AdvertisedListener) {
			idx = i
			break
		}
	}
	if idx < 0 {
		if c.AdvertisedListener != "" {
			return "", keyError(AdvertisedListener, "no %s listener in %s (%s)", c.AdvertisedListener, Listeners, strings.Join(c.Listeners, ","))
		}
		return "", keyError(Listeners, "no listener is bound")
	}
	u, err := url.Parse(bound[idx])
	if err != nil {
		return "", fmt.Errorf("bound listener %q: %w", bound[idx], err)
	}
	host := c.AdvertisedHost
	if host == "" {
		cu, err := url.Parse(c.Listeners[idx])
		if err == nil {
			host = cu.Hostname()
		}
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			return "", keyError(AdvertisedHost, "the listener %s has no host and the host name is unknown: set %s", c.Listeners[idx], AdvertisedHost)
		}
		host = h
	}
	port := u.Port()
	if c.AdvertisedPort > 0 {
		port = strconv.Itoa(c.AdvertisedPort)
	}
	return u.Scheme + "://" + net.JoinHostPort(host, port), nil
}
