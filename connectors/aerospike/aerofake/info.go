package aerofake

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
)

const (
	buildVersion = "8.1.2.0"
	edition      = "Aerospike Community Edition"
	// features is the real CE 8.1 string. The client requires pscans and
	// uses pquery for the partition-query path; the other names are
	// advertised as a real node would, even where this double answers
	// UNSUPPORTED_FEATURE (UDFs, secondary indexes).
	features = "batch-any;batch-index;blob-bits;cdt-index;cdt-list;cdt-map;cluster-stable;float;geo;" +
		"sindex-exists;peers;pipelining;pquery;pscans;query-show;relaxed-sc;replicas;replicas-all;" +
		"replicas-master;replicas-max;truncate-namespace;udf"
	partitionGeneration = "1"
	peersGeneration     = "1"
)

// allPartitions is the base64 bitmap of 4096 owned partitions.
var allPartitions = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xFF}, nPartitions/8))

// replicasValue builds the "replicas" answer: one node, regime 0 (AP), one
// replica owning every partition of every namespace.
func replicasValue(names []string) string {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, n+":0,1,"+allPartitions)
	}
	return strings.Join(parts, ";")
}

// handleInfo answers an info request: one "name\tvalue\n" line per requested
// name, echoing each name exactly and in request order.
func (c *conn) handleInfo(body []byte) error {
	s := c.s
	s.stats.info.Add(1)
	act := s.faults.match(OpInfo, nil)
	if act != nil {
		if err := c.applyBefore(act); err != nil {
			return err
		}
	}
	names := strings.Split(string(body), "\n")
	if len(names) > 0 && names[len(names)-1] == "" {
		names = names[:len(names)-1]
	}
	if len(names) == 0 {
		names = []string{"build", "edition", "node", "version"}
	}
	out := appendProtoHeader(c.out[:0], protoInfo, 0)
	for _, name := range names {
		if name == "" {
			continue
		}
		var value string
		if act != nil && act.rc != 0 {
			value = fmt.Sprintf("ERROR:%d:injected fault", act.rc)
		} else {
			value = s.infoValue(name)
		}
		out = append(out, name...)
		out = append(out, '\t')
		out = append(out, value...)
		out = append(out, '\n')
	}
	if act != nil && act.afterApply && act.drop {
		return errDropped
	}
	putProtoSize(out, 0, protoInfo)
	c.out = out
	_, err := c.w.Write(out)
	return err
}

func (s *Server) infoValue(name string) string {
	cmd, params, _ := strings.Cut(name, ":")
	switch cmd {
	case "build":
		return buildVersion
	case "version":
		return edition + " build " + buildVersion
	case "edition":
		return edition
	case "node":
		return s.node
	case "features":
		return features
	case "partition-generation":
		return partitionGeneration
	case "peers-generation":
		return peersGeneration
	case "peers-clear-std", "peers-clear-alt", "peers-tls-std", "peers-tls-alt":
		// One node: the peer list excludes the node itself.
		return peersGeneration + "," + strconv.Itoa(s.port()) + ",[]"
	case "replicas":
		return s.replicas
	case "replicas-master":
		parts := make([]string, 0, len(s.nsOrder))
		for _, n := range s.nsOrder {
			parts = append(parts, n+":"+allPartitions)
		}
		return strings.Join(parts, ";")
	case "service-clear-std", "service-clear-alt", "service":
		return s.serviceAddr()
	case "services", "services-alumni", "services-alternate":
		return ""
	case "cluster-name":
		if s.cfg.ClusterName == "" {
			return "null"
		}
		return s.cfg.ClusterName
	case "namespaces":
		return strings.Join(s.nsOrder, ";")
	case "namespace":
		return s.namespaceInfo(params)
	case "sets":
		return s.setsInfo(params)
	case "statistics":
		st := s.Stats()
		objects := 0
		now := s.now().cl
		for _, n := range s.nsOrder {
			objects += s.namespaces[n].count("", true, now)
		}
		return fmt.Sprintf("objects=%d;client_connections=%d;cluster_size=1", objects, st.ConnectionsOpen)
	case "truncate":
		return s.truncateInfo(params, false)
	case "truncate-namespace":
		return s.truncateInfo(params, true)
	case "rack-ids":
		return "ERROR:25:enterprise only"
	case "stats":
		if s.cfg.StatsInfo {
			return s.Stats().String()
		}
	}
	if strings.HasPrefix(name, "namespace/") {
		return s.namespaceInfo("namespace=" + strings.TrimPrefix(name, "namespace/"))
	}
	if strings.HasPrefix(name, "sets/") {
		return s.setsInfo("namespace=" + strings.TrimPrefix(name, "sets/"))
	}
	return "ERROR:4:unrecognized command"
}

func (s *Server) port() int {
	if s.ln == nil {
		return 3000
	}
	if a, ok := s.ln.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 3000
}

// serviceAddr is the advertised address. An unspecified listen IP (0.0.0.0)
// answers empty, which the client parses as "no alternative address".
func (s *Server) serviceAddr() string {
	if s.ln == nil {
		return ""
	}
	a, ok := s.ln.Addr().(*net.TCPAddr)
	if !ok || a.IP.IsUnspecified() {
		return ""
	}
	return net.JoinHostPort(a.IP.String(), strconv.Itoa(a.Port))
}

// infoParams parses "k=v;k=v".
func infoParams(p string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(p, ";") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

func (s *Server) namespaceInfo(params string) string {
	name := infoParams(params)["namespace"]
	if name == "" {
		name = params
	}
	ns := s.namespaces[name]
	if ns == nil {
		return "ERROR:20:namespace not found"
	}
	return fmt.Sprintf("objects=%d;replication-factor=1;default-ttl=%d;allow-ttl-without-nsup=%t;nsup-period=0;max-record-size=%d",
		ns.count("", true, s.now().cl), int64(ns.cfg.DefaultTTL.Seconds()), ns.cfg.AllowTTL, s.cfg.MaxRecordSize)
}

func (s *Server) setsInfo(params string) string {
	filter := infoParams(params)["namespace"]
	now := s.now().cl
	var b strings.Builder
	for _, n := range s.nsOrder {
		if filter != "" && filter != n {
			continue
		}
		counts := map[string]int{}
		ns := s.namespaces[n]
		for i := range ns.parts {
			p := &ns.parts[i]
			if p.empty() {
				continue
			}
			p.mu.Lock()
			for _, r := range p.recs {
				if r.set != "" && !r.expired(now) {
					counts[r.set]++
				}
			}
			p.mu.Unlock()
		}
		sets := make([]string, 0, len(counts))
		for set := range counts {
			sets = append(sets, set)
		}
		sort.Strings(sets)
		for _, set := range sets {
			fmt.Fprintf(&b, "ns=%s:set=%s:objects=%d;", n, set, counts[set])
		}
	}
	return b.String()
}

// truncateInfo implements truncate:namespace=<ns>;set=<set>[;lut=<ns>] and
// truncate-namespace:namespace=<ns>[;lut=<ns>]: records last updated at or
// before lut (default now) are removed.
func (s *Server) truncateInfo(params string, wholeNamespace bool) string {
	kv := infoParams(params)
	ns := s.namespaces[kv["namespace"]]
	if ns == nil {
		return "ERROR:4:namespace not found"
	}
	set := kv["set"]
	if !wholeNamespace && set == "" {
		return "ERROR:4:set not specified"
	}
	now := s.now()
	lut := now.nanos
	if v, ok := kv["lut"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return "ERROR:4:bad lut"
		}
		if n > now.nanos {
			return "ERROR:4:lut is in the future"
		}
		lut = n
	}
	ns.truncate(set, wholeNamespace, lut)
	return "OK"
}
