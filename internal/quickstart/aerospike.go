package quickstart

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	as "github.com/aerospike/aerospike-client-go/v7"
	"github.com/aerospike/aerospike-client-go/v7/types"

	"github.com/connectd/connectd/connectors/aerospike"
)

// counters is what a scan of the sink's set finds: per key the amount and
// count bins.
type counters struct {
	amounts map[string]int64
	applied int64 // sum of the count bins: records applied
}

// aerospikeReader scans the sink's set.
type aerospikeReader struct {
	client         *as.Client
	namespace, set string
}

func newAerospikeReader(hosts, namespace, set string) (*aerospikeReader, error) {
	var hs []*as.Host
	for _, h := range strings.Split(hosts, ",") {
		host, port, err := net.SplitHostPort(strings.TrimSpace(h))
		if err != nil {
			return nil, fmt.Errorf("aerospike.hosts %q: %w", hosts, err)
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("aerospike.hosts %q: port %q", hosts, port)
		}
		hs = append(hs, as.NewHost(host, n))
	}
	pol := as.NewClientPolicy()
	pol.Timeout = 5 * time.Second
	c, err := as.NewClientWithPolicyAndHost(pol, hs...)
	if err != nil {
		return nil, fmt.Errorf("connect to Aerospike at %s: %w", hosts, err)
	}
	return &aerospikeReader{client: c, namespace: namespace, set: set}, nil
}

func (r *aerospikeReader) close() { r.client.Close() }

func (r *aerospikeReader) scan() (counters, error) {
	pol := as.NewScanPolicy()
	pol.TotalTimeout = 10 * time.Second
	rs, err := r.client.ScanAll(pol, r.namespace, r.set, AmountBin, CountBin)
	if err != nil {
		return counters{}, err
	}
	defer rs.Close()
	out := counters{amounts: map[string]int64{}}
	for res := range rs.Results() {
		if res.Err != nil {
			return counters{}, res.Err
		}
		k := ""
		if v := res.Record.Key.Value(); v != nil {
			k = fmt.Sprint(v.GetObject())
		} else {
			k = fmt.Sprintf("digest:%x", res.Record.Key.Digest())
		}
		out.amounts[k] += asInt(res.Record.Bins[AmountBin])
		out.applied += asInt(res.Record.Bins[CountBin])
	}
	return out, nil
}

// sinkStats reads the sink's durable counters: the stats.set record the
// AerospikeSink keeps under its connector's name (bins applied and
// duplicates). found is false until the sink wrote it.
func (r *aerospikeReader) sinkStats(set, connector string) (applied, duplicates int64, found bool, err error) {
	key, err := as.NewKey(r.namespace, set, connector)
	if err != nil {
		return 0, 0, false, err
	}
	pol := as.NewPolicy()
	pol.TotalTimeout = 5 * time.Second
	rec, err := r.client.Get(pol, key, aerospike.StatsBinApplied, aerospike.StatsBinDuplicates)
	if err != nil {
		var ae *as.AerospikeError
		if errors.As(err, &ae) && ae.Matches(types.KEY_NOT_FOUND_ERROR) {
			return 0, 0, false, nil
		}
		return 0, 0, false, err
	}
	return asInt(rec.Bins[aerospike.StatsBinApplied]), asInt(rec.Bins[aerospike.StatsBinDuplicates]), true, nil
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}
