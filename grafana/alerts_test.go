package grafana

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

type ruleFile struct {
	Groups []struct {
		Name  string
		Rules []struct {
			Alert       string
			Expr        string
			For         string
			Labels      map[string]string
			Annotations map[string]string
		}
	}
}

type ruleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []struct {
				ExpLabels map[string]string `yaml:"exp_labels"`
			} `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	}
}

// The alert rules pass promtool check rules and their unit tests; every
// alert has a severity, a summary and a runbook that exists in
// docs/operations.md, and a unit test where it fires and one where it stays
// silent.
func TestAlertRules(t *testing.T) {
	rules, err := filepath.Glob("alerts/*.yml")
	if err != nil || len(rules) == 0 {
		t.Fatalf("alert rule files: %v %v", rules, err)
	}
	tests, err := filepath.Glob("alerts/tests/*.yml")
	if err != nil || len(tests) == 0 {
		t.Fatalf("alert rule tests: %v %v", tests, err)
	}

	runbooks := runbookTitles(t)
	alerts := map[string]bool{}
	for _, f := range rules {
		var rf ruleFile
		readYAML(t, f, &rf)
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				if r.Alert == "" {
					continue
				}
				alerts[r.Alert] = true
				if r.Labels["severity"] != "critical" && r.Labels["severity"] != "warning" {
					t.Errorf("%s: severity %q", r.Alert, r.Labels["severity"])
				}
				if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
					t.Errorf("%s: summary and description are required", r.Alert)
				}
				rb, ok := strings.CutPrefix(r.Annotations["runbook"], "docs/operations.md#runbooks: ")
				if !ok {
					t.Errorf("%s: runbook %q does not start with docs/operations.md#runbooks: ", r.Alert, r.Annotations["runbook"])
					continue
				}
				found := false
				for _, title := range runbooks {
					found = found || strings.HasPrefix(rb, title)
				}
				if !found {
					t.Errorf("%s: runbook %q names no runbook of docs/operations.md (%q)", r.Alert, rb, runbooks)
				}
			}
		}
	}

	fires, silent := map[string]bool{}, map[string]bool{}
	for _, f := range tests {
		var rt ruleTests
		readYAML(t, f, &rt)
		for _, tc := range rt.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fires[a.Alertname] = true
				} else {
					silent[a.Alertname] = true
				}
			}
		}
	}
	for a := range alerts {
		if !fires[a] || !silent[a] {
			t.Errorf("%s: unit tests where it fires: %v, where it stays silent: %v", a, fires[a], silent[a])
		}
	}

	promtool := promTool(t, "promtool")
	for _, args := range [][]string{append([]string{"check", "rules"}, rules...), append([]string{"test", "rules"}, tests...)} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// runbookTitles are the bold titles of docs/operations.md's Runbooks
// section ("**A worker is down.**" gives "A worker is down.").
func runbookTitles(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "\n## Runbooks\n")
	if !ok {
		t.Fatal("docs/operations.md has no Runbooks section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^\*\*([^*]+)\*\*`).FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	return out
}
