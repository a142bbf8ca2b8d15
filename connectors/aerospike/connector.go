package aerospike

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"

	"github.com/connectd/connectd/framework/sdk"
)

// Class is the connector.class of the sink.
const Class = "AerospikeSink"

// Version is the connector's version, reported by the REST API.
const Version = "0.1.0"

// validateTimeout caps how long Validate waits for the cluster, so the
// REST validate call answers promptly for unreachable hosts.
const validateTimeout = 5 * time.Second

// Connector is the AerospikeSink connector. Its zero value is ready to use.
type Connector struct {
	props map[string]string
}

var _ sdk.SinkConnector = (*Connector)(nil)

// Spec describes the connector class.
func (c *Connector) Spec() sdk.Spec {
	return sdk.Spec{
		Class:   Class,
		Version: Version,
		Type:    sdk.Sink,
		Summary: "Writes Kafka records to Aerospike effectively once: replays and zombie writers are skipped using the applied positions stored in each record.",
		Config:  configDef(),
	}
}

// Validate checks what the ConfigDef's per-key validators cannot: rules
// spanning keys, and (when the hosts are reachable) that the namespace
// exists. An unreachable cluster is reported on aerospike.hosts.
func (c *Connector) Validate(ctx context.Context, props map[string]string) []sdk.FieldError {
	vals, keyErrs := parseDef(configDef(), props)
	errs := crossCheck(vals)
	bad := map[string]bool{}
	for _, e := range keyErrs {
		bad[e.Key] = true
	}
	for _, e := range errs {
		bad[e.Key] = true
	}
	if bad[KeyHosts] || bad[KeyNamespace] || bad[KeyTLSEnabled] || bad[KeyTLSCAFile] || bad[KeyTLSCertFile] || bad[KeyTLSKeyFile] {
		return errs
	}
	// Keys that failed their own checks fall back to their defaults: the
	// cluster can still be checked.
	for _, k := range configDef().Keys() {
		if _, ok := vals[k.Name]; !ok {
			vals[k.Name] = k.Default
		}
	}
	cfg := configFromVals(vals)
	return append(errs, checkCluster(ctx, cfg)...)
}

// checkCluster connects and checks that the namespace exists.
func checkCluster(ctx context.Context, cfg *Config) []sdk.FieldError {
	probe := *cfg
	if probe.ConnectTimeout <= 0 || probe.ConnectTimeout > validateTimeout {
		probe.ConnectTimeout = validateTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, probe.ConnectTimeout+time.Second)
	defer cancel()
	client, err := connect(ctx, &probe)
	if err != nil && securityUnsupported(err) {
		return []sdk.FieldError{{Key: KeyUser, Message: errNoSecurity.Error()}}
	}
	if err != nil {
		return []sdk.FieldError{{Key: KeyHosts, Message: fmt.Sprintf("cannot reach the Aerospike cluster at %s: %s", hostsString(probe.Hosts), rootCause(err))}}
	}
	defer client.Close()
	nodes := client.GetNodes()
	if len(nodes) == 0 {
		return []sdk.FieldError{{Key: KeyHosts, Message: fmt.Sprintf("the Aerospike cluster at %s has no active node", hostsString(probe.Hosts))}}
	}
	ip := as.NewInfoPolicy()
	ip.Timeout = probe.ConnectTimeout
	info, err := nodes[0].RequestInfo(ip, "namespaces")
	if err != nil {
		return []sdk.FieldError{{Key: KeyHosts, Message: fmt.Sprintf("cannot list namespaces of %s: %v", nodes[0].GetName(), err)}}
	}
	known := strings.Split(strings.TrimSpace(info["namespaces"]), ";")
	// A namespace taken from each record is checked per record.
	if !cfg.NamespaceSrc.dynamic() && !slices.Contains(known, cfg.Namespace) {
		return []sdk.FieldError{{Key: KeyNamespace, Message: fmt.Sprintf("namespace %q does not exist on the cluster at %s (namespaces: %s)",
			cfg.Namespace, hostsString(probe.Hosts), strings.Join(known, ", "))}}
	}
	return nil
}

// Start keeps the configuration for TaskConfigs.
func (c *Connector) Start(ctx context.Context, cctx sdk.ConnectorContext, props map[string]string) error {
	if _, errs := parseConfig(props); len(errs) > 0 {
		return fieldErrors(errs)
	}
	c.props = maps.Clone(props)
	return nil
}

// TaskConfigs gives every task the connector's configuration: the
// framework's consumer group spreads the partitions over the tasks.
func (c *Connector) TaskConfigs(ctx context.Context, maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = maps.Clone(c.props)
	}
	return out, nil
}

// Stop has nothing to release.
func (c *Connector) Stop(ctx context.Context) error { return nil }

// NewTask returns a fresh sink task.
func (c *Connector) NewTask() sdk.SinkTask { return &SinkTask{} }

// rootCause renders the innermost error of a chain on one line: client
// errors nest several layers of context around the socket error users
// need to see.
func rootCause(err error) string {
	code := ""
	for {
		var ae *as.AerospikeError
		if errors.As(err, &ae) && code == "" {
			code = ae.ResultCode.String()
		}
		if _, isNet := err.(*net.OpError); isNet {
			break // "dial tcp host:port: connect: connection refused"
		}
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	if code != "" {
		return msg + " (" + code + ")"
	}
	return msg
}
