// Package aerotest gives tests one Aerospike cluster to run against: a real
// cluster when AEROSPIKE_HOSTS names one, the in-memory test server
// (aerofake) otherwise.
//
// The same tests then prove two things: on the test server, everything the
// sink does, fault injection included; on a real cluster, that the sink's
// protocol holds against the server it will be deployed on. In external mode
// every test gets sets of its own (the test name and a random suffix),
// truncated when the test ends; results are read through the client only,
// and the assertions that need the test server's internals (injected faults,
// operation counters, a second namespace with a given configuration) are
// skipped with a logged reason.
//
// With no variable set the test server is used; it needs nothing outside
// the process, so CI runs are unchanged.
package aerotest

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// The environment variables that select an external cluster.
const (
	// EnvHosts lists the seed nodes, host:port[,host:port...]; IPv6
	// addresses in brackets.
	EnvHosts = "AEROSPIKE_HOSTS"
	// EnvNamespace is the namespace the tests write to; default "test".
	EnvNamespace = "AEROSPIKE_NAMESPACE"
	// EnvUser and EnvPassword authenticate against an Enterprise cluster
	// with security enabled; both or neither.
	EnvUser     = "AEROSPIKE_USER"
	EnvPassword = "AEROSPIKE_PASSWORD"
)

// DefaultNamespace is the namespace used when EnvNamespace is unset; a stock
// Aerospike configuration has it.
const DefaultNamespace = "test"

// ErrBadEnv is wrapped by every error about a malformed variable.
var ErrBadEnv = errors.New("malformed Aerospike test environment")

// Host is one seed node.
type Host struct {
	Name string
	Port int
}

// String is the host as aerospike.hosts takes it.
func (h Host) String() string { return net.JoinHostPort(h.Name, strconv.Itoa(h.Port)) }

// External is an external cluster named by the environment.
type External struct {
	Hosts     []Host
	Namespace string
	User      string
	Password  string
}

// HostList is the hosts as the sink's aerospike.hosts property takes them.
func (e External) HostList() string {
	parts := make([]string, len(e.Hosts))
	for i, h := range e.Hosts {
		parts[i] = h.String()
	}
	return strings.Join(parts, ",")
}

// FromEnv reads the variables through lookup (os.LookupEnv outside tests of
// this package). ok is false when EnvHosts is unset or blank: the caller
// uses the test server. A variable that is set but malformed is an error
// wrapping ErrBadEnv, never a silent fallback to the test server: a user
// who meant to test their cluster must not get a green run against the
// fake.
func FromEnv(lookup func(string) (string, bool)) (ext External, ok bool, err error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	raw := get(EnvHosts)
	if raw == "" {
		for _, k := range []string{EnvNamespace, EnvUser, EnvPassword} {
			if get(k) != "" {
				return External{}, false, fmt.Errorf("%w: %s is set but %s is not", ErrBadEnv, k, EnvHosts)
			}
		}
		return External{}, false, nil
	}
	for _, part := range strings.Split(raw, ",") {
		h, err := parseHost(strings.TrimSpace(part))
		if err != nil {
			return External{}, false, fmt.Errorf("%w: %s=%q: %w", ErrBadEnv, EnvHosts, raw, err)
		}
		ext.Hosts = append(ext.Hosts, h)
	}
	ext.Namespace = get(EnvNamespace)
	if ext.Namespace == "" {
		ext.Namespace = DefaultNamespace
	}
	if len(ext.Namespace) > 31 || strings.ContainsAny(ext.Namespace, " \t:;") {
		return External{}, false, fmt.Errorf("%w: %s=%q is not a namespace name (at most 31 bytes, no spaces, ':' or ';')", ErrBadEnv, EnvNamespace, ext.Namespace)
	}
	ext.User, ext.Password = get(EnvUser), get(EnvPassword)
	if (ext.User == "") != (ext.Password == "") {
		return External{}, false, fmt.Errorf("%w: %s and %s are set together or not at all", ErrBadEnv, EnvUser, EnvPassword)
	}
	return ext, true, nil
}

func parseHost(s string) (Host, error) {
	if s == "" {
		return Host{}, errors.New("empty host")
	}
	name, portStr, err := net.SplitHostPort(s)
	if err != nil {
		return Host{}, fmt.Errorf("%q is not host:port (IPv6 in brackets): %w", s, err)
	}
	if name == "" {
		return Host{}, fmt.Errorf("%q has no host name", s)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return Host{}, fmt.Errorf("%q: port %q is not in 1..65535", s, portStr)
	}
	return Host{Name: name, Port: port}, nil
}
