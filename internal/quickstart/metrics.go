package quickstart

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// DuplicatesMetric is the AerospikeSink counter of records it skipped
// because the target record showed them applied.
const DuplicatesMetric = "connectd_aerospike_sink_duplicates_skipped_total"

// scrapeSum fetches a Prometheus text exposition and sums the samples of
// the named metric over all label sets. found is false when the endpoint
// does not answer 200 or has no such metric.
func scrapeSum(ctx context.Context, hc *http.Client, url, name string) (sum float64, found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, false, err
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return 0, false, nil
	}
	return sumSamples(resp.Body, name)
}

// sumSamples sums the samples of metric name in the text format.
func sumSamples(r io.Reader, name string) (sum float64, found bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || !strings.HasPrefix(line, name) {
			continue
		}
		rest := line[len(name):]
		switch {
		case strings.HasPrefix(rest, "{"):
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				return 0, false, fmt.Errorf("malformed sample %q", line)
			}
			rest = rest[end+1:]
		case strings.HasPrefix(rest, " "):
		default:
			continue // another metric with this prefix
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, false, fmt.Errorf("malformed sample %q", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, false, fmt.Errorf("malformed sample %q: %w", line, err)
		}
		sum += v
		found = true
	}
	return sum, found, sc.Err()
}
