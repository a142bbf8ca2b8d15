package herder

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/connectd/connectd/framework/herder/assignment"
	"github.com/connectd/connectd/framework/rest/api"
)

func TestLimitsCheckConfig(t *testing.T) {
	lim := Limits{ConnectorTasks: 10, ConfigBytes: 200, WorkerTasks: 3}
	for _, tc := range []struct {
		name  string
		props map[string]string
		key   string // "" = accepted
	}{
		{"at the limit", map[string]string{"tasks.max": "10"}, ""},
		{"no tasks.max", map[string]string{"connector.class": "X"}, ""},
		{"not a number is the connector's to refuse", map[string]string{"tasks.max": "many"}, ""},
		{"over the limit", map[string]string{"tasks.max": "11"}, KeyConnectorTasksLimit},
		{"spaces", map[string]string{"tasks.max": " 100000 "}, KeyConnectorTasksLimit},
		{"beyond int64", map[string]string{"tasks.max": "99999999999999999999999"}, KeyConnectorTasksLimit},
		{"too large", map[string]string{"x": strings.Repeat("a", 200)}, KeyConnectorConfigMax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := lim.checkConfig("c", tc.props)
			if tc.key == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) || le.Key != tc.key || !errors.Is(err, ErrLimit) {
				t.Fatalf("got %v, want a LimitError of %s", err, tc.key)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%s=%d", le.Key, le.Limit)) {
				t.Errorf("message %q does not name the limit and its value", err)
			}
		})
	}
}

func TestLimitsCheckTaskConfigs(t *testing.T) {
	lim := Limits{ConnectorTasks: 2, ConfigBytes: 100, WorkerTasks: 3}
	small := map[string]string{"task": "0"}
	for _, tc := range []struct {
		name    string
		configs []map[string]string
		key     string
	}{
		{"none", nil, ""},
		{"at the limit", []map[string]string{small, small}, ""},
		{"too many", []map[string]string{small, small, small}, KeyConnectorTasksLimit},
		{"one too large", []map[string]string{small, {"x": strings.Repeat("b", 100)}}, KeyConnectorConfigMax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := lim.checkTaskConfigs("c", tc.configs)
			var le *LimitError
			switch {
			case tc.key == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.key != "" && (!errors.As(err, &le) || le.Key != tc.key):
				t.Fatalf("got %v, want a LimitError of %s", err, tc.key)
			}
		})
	}
}

func TestLimitsWorkerFull(t *testing.T) {
	lim := Limits{WorkerTasks: 3}
	id := api.ConnectorTaskID{Connector: "c", Task: 7}
	if err := lim.workerFull(id, 2); err != nil {
		t.Fatalf("2 of 3 running: %v", err)
	}
	err := lim.workerFull(id, 3)
	if err == nil || !strings.Contains(err.Error(), "worker.tasks.max=3") || !strings.Contains(err.Error(), "c-7") {
		t.Fatalf("3 of 3 running: %v", err)
	}
}

// A stored connector with more task configs than the limit gets none of
// them assigned (its connector instance still is).
func TestLimitsKeepOversizedTaskSetsOutOfTheAssignment(t *testing.T) {
	recs := []rec{{"connector-big", `{"properties":{"name":"big","tasks.max":"3"}}`}}
	for i := 0; i < 3; i++ {
		recs = append(recs, rec{fmt.Sprintf("task-big-%d", i), `{"properties":{}}`})
	}
	recs = append(recs, rec{"commit-big", `{"tasks":3}`},
		rec{"connector-ok", `{"properties":{"name":"ok","tasks.max":"2"}}`},
		rec{"task-ok-0", `{"properties":{}}`}, rec{"task-ok-1", `{"properties":{}}`}, rec{"commit-ok", `{"tasks":2}`})
	s := replay(t, recs)
	lim := Limits{ConnectorTasks: 2, ConfigBytes: 1 << 10, WorkerTasks: 10}
	got := map[string]int{}
	for _, it := range lim.assignableItems(s, assignment.Items(s)) {
		if !assignment.IsConnector(it) {
			got[it.Connector]++
		}
		got[it.Connector+"/items"]++
	}
	if got["big"] != 0 || got["big/items"] != 1 || got["ok"] != 2 {
		t.Fatalf("assignable items per connector: %v", got)
	}
}
