package grafana

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// dashboard is the part of Grafana's dashboard JSON model the tests read.
type dashboard struct {
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Inputs json.RawMessage `json:"__inputs"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID          int                      `json:"id"`
	Type        string                   `json:"type"`
	Title       string                   `json:"title"`
	Description string                   `json:"description"`
	Datasource  *datasourceRef           `json:"datasource"`
	GridPos     struct{ H, W, X, Y int } `json:"gridPos"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	Targets []target `json:"targets"`
	Panels  []panel  `json:"panels"` // a collapsed row's panels
}

type target struct {
	RefID      string         `json:"refId"`
	Expr       string         `json:"expr"`
	Datasource *datasourceRef `json:"datasource"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Definition string          `json:"definition"`
	Datasource *datasourceRef  `json:"datasource"`
	AllValue   string          `json:"allValue"`
	Current    struct {
		Value any `json:"value"`
	} `json:"current"`
}

// provisionedUID is the datasource uid grafana/provisioning/datasources
// gives Prometheus.
const provisionedUID = "prometheus"

func loadDashboards(t *testing.T) map[string]dashboard {
	t.Helper()
	files, err := filepath.Glob("dashboards/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("dashboards: %v; want the cluster overview and the connector detail", files)
	}
	out := map[string]dashboard{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("%s: invalid JSON: %v", f, err)
		}
		if strings.Contains(string(raw), "${DS_") {
			t.Errorf("%s: refers to an import input (${DS_...}), which breaks provisioning", f)
		}
		out[f] = d
	}
	return out
}

// allPanels flattens rows' nested panels.
func allPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

func TestDashboardsStructure(t *testing.T) {
	uids := map[string]string{}
	for f, d := range loadDashboards(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if n := len(d.UID); n < 8 || n > 40 {
				t.Errorf("uid %q: Grafana wants 8 to 40 characters", d.UID)
			}
			if other, dup := uids[d.UID]; dup {
				t.Errorf("uid %q also used by %s", d.UID, other)
			}
			uids[d.UID] = f
			if d.Title == "" || d.SchemaVersion != 39 {
				t.Errorf("title %q, schemaVersion %d (pinned to 39)", d.Title, d.SchemaVersion)
			}
			if d.Inputs != nil {
				t.Error("__inputs present: provisioned dashboards must use the datasource variable")
			}

			// Template variables: a datasource variable defaulting to the
			// provisioned uid; worker and connector (and task on the
			// detail dashboard) from label_values over connectd metrics.
			vars := map[string]variable{}
			for _, v := range d.Templating.List {
				vars[v.Name] = v
			}
			ds, ok := vars["datasource"]
			if !ok || ds.Type != "datasource" || string(ds.Query) != `"prometheus"` {
				t.Fatalf("no datasource variable of type datasource over prometheus: %+v", ds)
			}
			if ds.Current.Value != provisionedUID {
				t.Errorf("datasource variable defaults to %v, want the provisioned uid %q", ds.Current.Value, provisionedUID)
			}
			want := []string{"job", "worker", "connector"}
			if strings.Contains(f, "connector") {
				want = append(want, "task")
			}
			for _, name := range want {
				v, ok := vars[name]
				if !ok {
					t.Errorf("no %s variable", name)
					continue
				}
				if v.Datasource == nil || v.Datasource.UID != "${datasource}" {
					t.Errorf("variable %s does not use ${datasource}", name)
				}
				if !regexp.MustCompile(`^label_values\(connectd_[a-z_]+(\{[^}]*\})?, *[a-z_]+\)$`).MatchString(v.Definition) {
					t.Errorf("variable %s: query %q is not label_values(connectd_..., label)", name, v.Definition)
				}
				if v.AllValue != ".*" {
					t.Errorf("variable %s: allValue %q, want .* (queries match with =~)", name, v.AllValue)
				}
			}

			ids := map[int]bool{}
			occupied := map[[2]int]string{}
			for _, p := range allPanels(d.Panels) {
				where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
				if p.ID <= 0 || ids[p.ID] {
					t.Errorf("%s: id missing or not unique", where)
				}
				ids[p.ID] = true
				g := p.GridPos
				if g.W < 1 || g.H < 1 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
					t.Errorf("%s: gridPos %+v outside the 24-column grid", where, g)
				}
				for x := g.X; x < g.X+g.W; x++ {
					for y := g.Y; y < g.Y+g.H; y++ {
						if other, taken := occupied[[2]int{x, y}]; taken {
							t.Errorf("%s overlaps %s at column %d row %d", where, other, x, y)
							goto placed
						}
						occupied[[2]int{x, y}] = where
					}
				}
			placed:
				if p.Type == "row" {
					if p.Title == "" {
						t.Errorf("%s: row without a title", where)
					}
					continue
				}
				if p.Title == "" || p.Description == "" {
					t.Errorf("%s: title and description are required", where)
				}
				if p.Datasource == nil || p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
					t.Errorf("%s: datasource %+v, want prometheus ${datasource}", where, p.Datasource)
				}
				if p.FieldConfig.Defaults.Unit == "" {
					t.Errorf("%s: no unit", where)
				}
				if len(p.Targets) == 0 {
					t.Errorf("%s: no queries", where)
				}
				for _, tg := range p.Targets {
					if tg.Datasource == nil || tg.Datasource.UID != "${datasource}" {
						t.Errorf("%s target %s: does not use ${datasource}", where, tg.RefID)
					}
					checkExpr(t, where+" target "+tg.RefID, tg.Expr)
				}
			}
		})
	}
}

var (
	rangeFunc   = regexp.MustCompile(`\b(rate|irate|increase|deriv|delta)\(`)
	rangeWindow = regexp.MustCompile(`\[([^\]]+)\]`)
	metricName  = regexp.MustCompile(`\b((?:connectd|process|go)_[a-z0-9_]+)\b`)
	selectorVar = regexp.MustCompile(`\b(job|instance|connector|task)=~"\$(job|worker|connector|task)"`)
)

// checkExpr applies the dashboard-linter rules that matter here: range
// functions use $__rate_interval, every connectd selector filters by the
// job and worker variables, and every metric is one connectd documents.
func checkExpr(t *testing.T, where, expr string) {
	t.Helper()
	if strings.TrimSpace(expr) == "" {
		t.Errorf("%s: empty query", where)
		return
	}
	if rangeFunc.MatchString(expr) {
		for _, w := range rangeWindow.FindAllStringSubmatch(expr, -1) {
			if w[1] != "$__rate_interval" {
				t.Errorf("%s: range [%s], want [$__rate_interval]: %s", where, w[1], expr)
			}
		}
	}
	for _, sel := range regexp.MustCompile(`\b[a-z_]+\{([^}]*)\}`).FindAllStringSubmatch(expr, -1) {
		matchers := sel[1]
		if !strings.Contains(matchers, `job=~"$job"`) || !strings.Contains(matchers, `instance=~"$worker"`) {
			t.Errorf("%s: selector {%s} does not filter job=~\"$job\", instance=~\"$worker\"", where, matchers)
		}
		for _, m := range selectorVar.FindAllStringSubmatch(matchers, -1) {
			if want := map[string]string{"job": "job", "instance": "worker", "connector": "connector", "task": "task"}[m[1]]; m[2] != want {
				t.Errorf("%s: %s matched against $%s", where, m[1], m[2])
			}
		}
	}
	documented := documentedMetrics(t)
	for _, m := range metricName.FindAllStringSubmatch(expr, -1) {
		name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m[1], "_bucket"), "_sum"), "_count")
		if strings.HasPrefix(name, "connectd_") && !documented[name] {
			t.Errorf("%s: metric %s is not documented in docs/monitoring.md", where, name)
		}
	}
}

var docMetric = regexp.MustCompile("`(connectd_[a-z0-9_]+)`")

// documentedMetrics are the connectd metric names docs/monitoring.md lists.
func documentedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile("../docs/monitoring.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range docMetric.FindAllStringSubmatch(string(raw), -1) {
		out[m[1]] = true
	}
	return out
}

// The provisioning files point Grafana at this directory's dashboards and
// give Prometheus the uid the dashboards default to.
func TestProvisioning(t *testing.T) {
	var ds struct {
		APIVersion  int `yaml:"apiVersion"`
		Datasources []struct {
			Name, Type, UID string
			IsDefault       bool `yaml:"isDefault"`
		}
	}
	readYAML(t, "provisioning/datasources/prometheus.yml", &ds)
	if ds.APIVersion != 1 || len(ds.Datasources) != 1 || ds.Datasources[0].Type != "prometheus" || ds.Datasources[0].UID != provisionedUID {
		t.Errorf("datasource provisioning: %+v", ds)
	}
	var dp struct {
		APIVersion int `yaml:"apiVersion"`
		Providers  []struct {
			Name, Type string
			Options    struct{ Path string }
		}
	}
	readYAML(t, "provisioning/dashboards/connectd.yml", &dp)
	if dp.APIVersion != 1 || len(dp.Providers) != 1 || dp.Providers[0].Type != "file" || dp.Providers[0].Options.Path == "" {
		t.Errorf("dashboard provisioning: %+v", dp)
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// dashboardQueries lists every query of every dashboard: panel targets and
// template variables (label_values as "label_values" entries).
type query struct {
	where, expr string
	labelValues bool // expr is label_values(metric, label)
}

func dashboardQueries(t *testing.T) []query {
	t.Helper()
	var out []query
	for f, d := range loadDashboards(t) {
		base := filepath.Base(f)
		for _, v := range d.Templating.List {
			if v.Type == "query" {
				out = append(out, query{where: base + " variable " + v.Name, expr: v.Definition, labelValues: true})
			}
		}
		for _, p := range allPanels(d.Panels) {
			for _, tg := range p.Targets {
				out = append(out, query{where: fmt.Sprintf("%s panel %q target %s", base, p.Title, tg.RefID), expr: tg.Expr})
			}
		}
	}
	slices.SortFunc(out, func(a, b query) int { return strings.Compare(a.where, b.where) })
	return out
}
