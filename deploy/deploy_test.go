// Package deploy_test checks the deployment files here what can be checked
// without a container engine: every YAML file parses, every file they
// reference exists, the workers' worker.properties use only keys connectd
// knows (with the placeholders filled from each service's environment),
// the connectd commands they run exist, probes and scrape targets point at
// real endpoints and ports. Running them needs Docker (with image pulls)
// or a Kubernetes cluster, which this test does not have.
package deploy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/framework/configprovider"
	"github.com/connectd/connectd/framework/properties"
	"github.com/connectd/connectd/framework/rest"
	"github.com/connectd/connectd/framework/rest/resttest"
	"github.com/connectd/connectd/framework/workerconfig"
	"github.com/connectd/connectd/internal/quickstart"
)

// connectdBin and connectdDevBin are connectd and connectd-dev built for
// the command checks.
var connectdBin, connectdDevBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "connectd-deploy-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	connectdBin = filepath.Join(dir, "connectd")
	if out, err := exec.Command("go", "build", "-o", connectdBin, "../cmd/connectd").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build connectd: %v\n%s", err, out)
		os.Exit(1)
	}
	connectdDevBin = filepath.Join(dir, "connectd-dev")
	if out, err := exec.Command("go", "build", "-o", connectdDevBin, "../cmd/connectd-dev").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build connectd-dev: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ---------------------------------------------------------------- helpers

func parseYAML(t *testing.T, path string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var docs []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
	if len(docs) == 0 {
		t.Fatalf("%s: no YAML documents", path)
	}
	return docs
}

func mustExist(t *testing.T, what, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("%s: %s does not exist", what, path)
	}
}

func get(m any, path ...string) any {
	for _, p := range path {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		m = mm[p]
	}
	return m
}

func strs(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
	case string:
		out = strings.Fields(x)
	}
	return out
}

// mapEnv is an env config provider over a fixed map.
type mapEnv map[string]string

func (m mapEnv) Get(_, key string) (string, error) {
	v, ok := m[key]
	if !ok {
		return "", fmt.Errorf("%s is not set in the environment", key)
	}
	return v, nil
}

// checkWorkerProperties parses a worker.properties file as the worker
// would with env as its environment: no error, no unknown key.
func checkWorkerProperties(t *testing.T, path string, env map[string]string) *workerconfig.Config {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props, err := properties.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	resolved, err := configprovider.NewResolver(map[string]configprovider.Provider{"env": mapEnv(env)}).Resolve(props)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	cfg, err := workerconfig.Parse(resolved)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if _, restKeys, err := rest.ParseConfig(cfg.Props); err != nil {
		t.Errorf("%s: REST keys: %v", path, err)
	} else {
		var unknown []string
		for _, k := range cfg.Unknown {
			if !slices.Contains(restKeys, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			t.Errorf("%s: keys connectd does not know: %v", path, unknown)
		}
	}
	if len(cfg.Ignored) > 0 || len(cfg.Dropped) > 0 {
		t.Errorf("%s: keys connectd ignores: %v %v", path, cfg.Ignored, cfg.Dropped)
	}
	return cfg
}

// checkCommand checks that args (what follows the connectd binary) start
// with a real command path: it walks the groups' --help listings.
func checkCommand(t *testing.T, where string, args []string) {
	t.Helper()
	checkCommandOf(t, where, connectdBin, args)
}

// checkCall checks a shellCalls call: connectd's or connectd-dev's.
func checkCall(t *testing.T, where string, call []string) {
	t.Helper()
	bin := connectdBin
	if call[0] == "connectd-dev" {
		bin = connectdDevBin
	}
	checkCommandOf(t, where, bin, call[1:])
}

func checkCommandOf(t *testing.T, where, bin string, args []string) {
	t.Helper()
	name := filepath.Base(bin)
	if len(args) == 0 {
		t.Errorf("%s: %s without a command", where, name)
		return
	}
	var path []string
	for _, a := range args {
		out, err := exec.Command(bin, append(slices.Clone(path), "--help")...).CombinedOutput()
		if err != nil && len(path) > 0 {
			t.Errorf("%s: %s %s --help: %v\n%s", where, name, strings.Join(path, " "), err, out)
			return
		}
		children := helpCommands(string(out))
		if children == nil {
			return // a leaf: the rest are its flags and arguments
		}
		if !slices.Contains(children, a) {
			t.Errorf("%s: %q is not a command of %s %s (have %v)", where, a, name, strings.Join(path, " "), children)
			return
		}
		path = append(path, a)
	}
}

// helpCommands lists the commands a group's help shows (nil for a leaf).
func helpCommands(help string) []string {
	_, after, ok := strings.Cut(help, "\ncommands:\n")
	if !ok {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(strings.NewReader(after))
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "  ") {
			break
		}
		out = append(out, strings.Fields(l)[0])
	}
	return out
}

// shellCalls returns every simple command of a shell text whose program
// is connectd or connectd-dev: the program's base name, then its
// arguments.
func shellCalls(text string) [][]string {
	var out [][]string
	for _, seg := range regexp.MustCompile(`&&|\|\||[;|&()]|\bdo\b|\bthen\b`).Split(text, -1) {
		f := strings.Fields(seg)
		if len(f) > 1 && (filepath.Base(f[0]) == "connectd" || filepath.Base(f[0]) == "connectd-dev") {
			out = append(out, append([]string{filepath.Base(f[0])}, f[1:]...))
		}
	}
	return out
}

// ---------------------------------------------------------------- tests

// Every YAML file of deploy/ and grafana/ parses.
func TestYAMLParses(t *testing.T) {
	n := 0
	for _, dir := range []string{".", "../grafana"} {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
				parseYAML(t, p)
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 8 {
		t.Fatalf("only %d YAML files found", n)
	}
}

func TestCompose(t *testing.T) {
	compose := parseYAML(t, "docker-compose.yml")[0]
	services, _ := compose["services"].(map[string]any)
	for _, want := range []string{"kafka", "aerospike", "prometheus", "grafana", "worker1", "worker2", "worker3"} {
		if services[want] == nil {
			t.Errorf("docker-compose.yml has no %s service", want)
		}
	}
	if img := fmt.Sprint(get(services, "aerospike", "image")); !strings.HasPrefix(img, "aerospike/aerospike-server") {
		t.Errorf("aerospike image %q is not Aerospike Community Edition's", img)
	}

	hosts := map[string]bool{}
	ports := map[string]bool{}
	workers := 0
	for name, svc := range services {
		where := "docker-compose.yml service " + name
		for _, v := range strs(get(svc, "volumes")) {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") {
				mustExist(t, where+" volume", src)
			}
		}
		if ctx, ok := get(svc, "build", "context").(string); ok {
			mustExist(t, where+" build context", ctx)
			mustExist(t, where+" dockerfile", filepath.Join(ctx, fmt.Sprint(get(svc, "build", "dockerfile"))))
		}
		for _, p := range strs(get(svc, "ports")) {
			host, _, _ := strings.Cut(p, ":")
			if ports[host] {
				t.Errorf("%s: host port %s is published twice", where, host)
			}
			ports[host] = true
		}
		if img := fmt.Sprint(get(svc, "image")); !strings.HasPrefix(img, "connectd:") {
			continue
		}
		env := map[string]string{}
		if e, ok := get(svc, "environment").(map[string]any); ok {
			for k, v := range e {
				env[k] = fmt.Sprint(v)
			}
		}
		cmd := strs(get(svc, "command"))
		if slices.Equal(strs(get(svc, "entrypoint")), []string{"/bin/sh", "-c"}) {
			calls := shellCalls(strings.Join(cmd, " "))
			if len(calls) == 0 {
				t.Errorf("%s: a shell command without connectd", where)
			}
			for _, c := range calls {
				checkCall(t, where, c)
			}
		} else {
			checkCommand(t, where, cmd)
		}
		// The demo pipeline's connector files resolve with this environment.
		files := quickstart.Files{
			Source:      "../quickstart/connectors/orders-datagen.json",
			Replication: "../quickstart/connectors/orders-replication.json",
			Sink:        "../quickstart/connectors/orders-aerospike.json",
		}
		if _, err := quickstart.Load(files, configprovider.NewResolver(map[string]configprovider.Provider{"env": mapEnv(env)})); err != nil {
			t.Errorf("%s: the demo pipeline's connector files do not resolve with its environment: %v", where, err)
		}
		if len(cmd) == 0 || cmd[0] != "worker" {
			continue
		}
		workers++
		var propsPath string
		for _, v := range strs(get(svc, "volumes")) {
			parts := strings.Split(v, ":")
			if len(parts) >= 2 && parts[1] == cmd[1] {
				propsPath = parts[0]
			}
		}
		if propsPath == "" {
			t.Errorf("%s: %s is not mounted", where, cmd[1])
			continue
		}
		cfg := checkWorkerProperties(t, propsPath, env)
		// The container health check (which the demo waits for) asks
		// /health without credentials, and must pass with auth on.
		hc := strs(get(svc, "healthcheck", "test"))
		if len(hc) < 2 || hc[0] != "CMD" || slices.ContainsFunc(hc, func(a string) bool { return a == "-u" || strings.HasPrefix(a, "--user") }) {
			t.Errorf("%s: healthcheck %q is not a credential-less CMD", where, hc)
		} else if u := hc[len(hc)-1]; !strings.HasPrefix(u, "http://127.0.0.1:8083/") {
			t.Errorf("%s: healthcheck asks %s, not this container's REST listener", where, u)
		} else {
			checkProbeWithAuthOn(t, where+" healthcheck", cfg.Props, strings.TrimPrefix(u, "http://127.0.0.1:8083"))
		}
		url, err := cfg.AdvertisedURL([]string{"http://0.0.0.0:8083"})
		if err != nil {
			t.Errorf("%s: %v", where, err)
		}
		if hosts[url] {
			t.Errorf("%s: advertised URL %s is not unique", where, url)
		}
		hosts[url] = true
		if !strings.Contains(url, "//"+name+":") {
			t.Errorf("%s: advertises %s, which other containers cannot reach by the service name", where, url)
		}
	}
	if workers != 3 {
		t.Errorf("%d worker services, want 3", workers)
	}

	// Prometheus scrapes every worker service and loads the alert rules.
	prom := parseYAML(t, "compose/prometheus.yml")[0]
	var targets []string
	for _, sc := range get(prom, "scrape_configs").([]any) {
		for _, st := range get(sc, "static_configs").([]any) {
			targets = append(targets, strs(get(st, "targets"))...)
		}
	}
	for _, w := range []string{"worker1:8083", "worker2:8083", "worker3:8083"} {
		if !slices.Contains(targets, w) {
			t.Errorf("compose/prometheus.yml does not scrape %s", w)
		}
	}
	if !slices.Contains(strs(get(services, "prometheus", "volumes")), "../grafana/alerts:/etc/prometheus/rules:ro") ||
		!slices.Contains(strs(get(prom, "rule_files")), "/etc/prometheus/rules/*.yml") {
		t.Error("the compose Prometheus does not load the alert rules of grafana/alerts")
	}
	// Grafana's provisioning points at the compose Prometheus and at the
	// mounted dashboards directory.
	ds := parseYAML(t, "../grafana/provisioning/datasources/prometheus.yml")[0]
	if u := fmt.Sprint(get(get(ds, "datasources").([]any)[0], "url")); u != "http://prometheus:9090" {
		t.Errorf("Grafana datasource URL %s is not the compose Prometheus", u)
	}
	dp := parseYAML(t, "../grafana/provisioning/dashboards/connectd.yml")[0]
	if p := fmt.Sprint(get(get(dp, "providers").([]any)[0], "options", "path")); !slices.Contains(strs(get(services, "grafana", "volumes")), "../grafana/dashboards:"+p+":ro") {
		t.Errorf("Grafana's dashboards provider reads %s, which the compose file does not mount", p)
	}
}

func TestDockerfile(t *testing.T) {
	raw, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(raw), "\\\n", " ")
	var entrypoint, cmd []string
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "COPY":
			if strings.HasPrefix(f[1], "--from") {
				continue
			}
			// Sources are relative to the build context, the repository root.
			for _, src := range f[1 : len(f)-1] {
				if src != "." {
					mustExist(t, "Dockerfile COPY", filepath.Join("..", src))
				}
			}
		case "RUN":
			for _, c := range shellCalls(strings.Join(f[1:], " ")) {
				checkCall(t, "Dockerfile RUN", c)
			}
			for _, m := range regexp.MustCompile(`make ((?:[a-z-]+ ?)+)`).FindAllStringSubmatch(line, -1) {
				for _, target := range strings.Fields(m[1]) {
					if out, err := exec.Command("make", "-C", "..", "-n", target).CombinedOutput(); err != nil {
						t.Errorf("Dockerfile: make %s: %v\n%s", target, err, out)
					}
				}
			}
		case "ENTRYPOINT":
			_ = json.Unmarshal([]byte(strings.Join(f[1:], " ")), &entrypoint)
		case "CMD":
			_ = json.Unmarshal([]byte(strings.Join(f[1:], " ")), &cmd)
		}
	}
	if len(entrypoint) != 1 || filepath.Base(entrypoint[0]) != "connectd" {
		t.Fatalf("ENTRYPOINT %q is not connectd", entrypoint)
	}
	checkCommand(t, "Dockerfile CMD", cmd)
	if len(cmd) == 2 && cmd[0] == "worker" && cmd[1] != "/etc/connectd/worker.properties" {
		t.Errorf("CMD reads %s, which the image does not have", cmd[1])
	}
}

func TestKubernetes(t *testing.T) {
	kust := parseYAML(t, "kubernetes/kustomization.yaml")[0]
	byKind := map[string]map[string]any{}
	for _, r := range strs(get(kust, "resources")) {
		p := filepath.Join("kubernetes", r)
		mustExist(t, "kustomization resource", p)
		for _, d := range parseYAML(t, p) {
			byKind[fmt.Sprint(d["kind"])] = d
		}
	}
	var props string
	for _, g := range get(kust, "configMapGenerator").([]any) {
		for _, f := range strs(get(g, "files")) {
			mustExist(t, "configMapGenerator file", filepath.Join("kubernetes", f))
			props = filepath.Join("kubernetes", f)
		}
	}
	for _, k := range []string{"Deployment", "Service", "ServiceMonitor"} {
		if byKind[k] == nil {
			t.Fatalf("no %s among the kustomization's resources", k)
		}
	}
	dep, svc, sm := byKind["Deployment"], byKind["Service"], byKind["ServiceMonitor"]
	c := get(dep, "spec", "template", "spec", "containers").([]any)[0]
	checkCommand(t, "Deployment args", strs(get(c, "args")))

	// Probes hit /health on the container's named port, and /health is an
	// endpoint of the REST API.
	portNames := map[string]bool{}
	for _, p := range get(c, "ports").([]any) {
		portNames[fmt.Sprint(get(p, "name"))] = true
	}
	var api struct {
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(rest.OpenAPI(), &api); err != nil {
		t.Fatal(err)
	}
	for _, probe := range []string{"startupProbe", "readinessProbe", "livenessProbe"} {
		path := fmt.Sprint(get(c, probe, "httpGet", "path"))
		if path != "/health" || api.Paths[path] == nil {
			t.Errorf("%s checks %s, want /health", probe, path)
		}
		if port := fmt.Sprint(get(c, probe, "httpGet", "port")); !portNames[port] {
			t.Errorf("%s uses port %s, which the container does not name", probe, port)
		}
		// /health itself may take up to 10 s (a ping of the cluster loop).
		if to, _ := get(c, probe, "timeoutSeconds").(int); to <= 10 {
			t.Errorf("%s timeoutSeconds %d is within /health's own 10 s bound", probe, to)
		}
	}

	// The Service selects the pods; the ServiceMonitor selects the Service
	// and scrapes a port it names.
	podLabels := get(dep, "spec", "template", "metadata", "labels").(map[string]any)
	for k, v := range get(svc, "spec", "selector").(map[string]any) {
		if podLabels[k] != v {
			t.Errorf("Service selector %s=%v does not match the pods", k, v)
		}
	}
	svcLabels := get(svc, "metadata", "labels").(map[string]any)
	for k, v := range get(sm, "spec", "selector", "matchLabels").(map[string]any) {
		if svcLabels[k] != v {
			t.Errorf("ServiceMonitor selector %s=%v does not match the Service", k, v)
		}
	}
	svcPorts := map[string]bool{}
	for _, p := range get(svc, "spec", "ports").([]any) {
		svcPorts[fmt.Sprint(get(p, "name"))] = true
		if tp := fmt.Sprint(get(p, "targetPort")); !portNames[tp] {
			t.Errorf("Service targetPort %s is not a container port name", tp)
		}
	}
	for _, e := range get(sm, "spec", "endpoints").([]any) {
		if !svcPorts[fmt.Sprint(get(e, "port"))] || get(e, "path") != "/metrics" {
			t.Errorf("ServiceMonitor endpoint %v does not scrape /metrics on a Service port", e)
		}
	}

	// The mounted worker.properties is valid with the pod's environment,
	// and the pod is given time for a graceful stop.
	if props == "" {
		t.Fatal("no worker.properties in the configMapGenerator")
	}
	cfg := checkWorkerProperties(t, props, map[string]string{"POD_IP": "10.1.2.3"})
	for _, probe := range []string{"startupProbe", "readinessProbe", "livenessProbe"} {
		if get(c, probe, "httpGet", "httpHeaders") != nil {
			t.Errorf("%s sends headers; probes must work without credentials", probe)
		}
		checkProbeWithAuthOn(t, "Deployment "+probe, cfg.Props, fmt.Sprint(get(c, probe, "httpGet", "path")))
	}
	grace, _ := get(dep, "spec", "template", "spec", "terminationGracePeriodSeconds").(int)
	if need := cfg.Worker.TaskShutdownTimeout.Seconds() + 10; float64(grace) < need {
		t.Errorf("terminationGracePeriodSeconds %d < task.shutdown.graceful.timeout.ms + 10 s (%.0f s)", grace, need)
	}
	if url, err := cfg.AdvertisedURL([]string{"http://0.0.0.0:8083"}); err != nil || url != "http://10.1.2.3:8083" {
		t.Errorf("pods advertise %q (%v), want their pod IP", url, err)
	}
}

// checkProbeWithAuthOn serves the REST API configured from a worker's
// properties with HTTP Basic authentication turned on, over a ready test
// herder, and asks path as a probe does, without credentials: it must
// answer 200, while the rest of the API still refuses (401).
func checkProbeWithAuthOn(t *testing.T, where string, props map[string]string, path string) {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte("probe-test-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(creds, []byte("ops:"+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withAuth := maps.Clone(props)
	withAuth[rest.PropBasicCredentials] = creds
	cfg, _, err := rest.ParseConfig(withAuth)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	srv, err := rest.NewServer(cfg, resttest.New())
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for _, tc := range []struct {
		path string
		want int
	}{{path, http.StatusOK}, {"/connectors", http.StatusUnauthorized}} {
		res, err := http.Get(ts.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("%s: with basic auth on, GET %s without credentials answers %d, want %d", where, tc.path, res.StatusCode, tc.want)
		}
	}
}

func TestSystemdUnit(t *testing.T) {
	raw, err := os.ReadFile("systemd/connectd.service")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	section := ""
	for _, l := range strings.Split(string(raw), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "["):
			section = strings.Trim(l, "[]")
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok {
				t.Fatalf("connectd.service: malformed line %q", l)
			}
			keys[section+"."+k] = v
		}
	}
	for _, k := range []string{"Unit.Description", "Service.ExecStart", "Service.User", "Install.WantedBy"} {
		if keys[k] == "" {
			t.Errorf("connectd.service lacks %s", k)
		}
	}
	exec := strings.Fields(keys["Service.ExecStart"])
	if len(exec) < 3 || filepath.Base(exec[0]) != "connectd" {
		t.Fatalf("ExecStart %q does not run connectd", keys["Service.ExecStart"])
	}
	checkCommand(t, "ExecStart", exec[1:])
	if exec[1] != "worker" || exec[2] != "/etc/connectd/worker.properties" {
		t.Errorf("ExecStart runs %q, want connectd worker /etc/connectd/worker.properties", exec[1:])
	}
	cfg := checkWorkerProperties(t, "systemd/worker.properties", nil)
	stop, err := strconv.Atoi(keys["Service.TimeoutStopSec"])
	if err != nil || float64(stop) < cfg.Worker.TaskShutdownTimeout.Seconds()+10 {
		t.Errorf("TimeoutStopSec %q < task.shutdown.graceful.timeout.ms + 10 s", keys["Service.TimeoutStopSec"])
	}
	if !slices.Contains(cfg.PluginPath, "/var/lib/connectd/plugins") || !strings.Contains(keys["Service.ReadOnlyPaths"], "/var/lib/connectd/plugins") {
		t.Error("plugin.path is not the read-only /var/lib/connectd/plugins of the unit")
	}
	// The commands the comment tells to run exist too.
	n := 0
	for _, l := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(strings.TrimPrefix(l, "#")), "connectd "); ok {
			n++
			rest, _, _ = strings.Cut(rest, "(")
			checkCommand(t, "connectd.service comment", strings.Fields(rest))
		}
	}
	if n == 0 {
		t.Error("connectd.service's comment no longer shows how to install the plugins")
	}
}
