package cli_test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/breadai/bread/cli"
)

// Offline checks of the container image recipe and the Kubernetes
// manifests (no cluster, no image registry): the probes name the routes
// bread serves, on the port it listens on, the drain fits in the grace
// period, and the ConfigMap's bread.yaml is a project `bread build`
// accepts and `bread start` serves with the probes let through.

func manifests(t *testing.T) map[string]map[string]any {
	t.Helper()
	files, err := filepath.Glob("../deploy/kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	out := map[string]map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		kind, _ := m["kind"].(string)
		if kind == "" || m["apiVersion"] == nil {
			t.Fatalf("%s: no kind or apiVersion", f)
		}
		out[kind] = m
	}
	return out
}

// at walks a decoded YAML value by map keys and list indexes.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not a map at %q", path, k)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("%v: no item %d", path, k)
			}
			v = l[k]
		}
	}
	return v
}

func num(v any) int {
	switch n := v.(type) {
	case uint64:
		return int(n)
	case int64:
		return int(n)
	case int:
		return n
	case string:
		i, _ := strconv.Atoi(n)
		return i
	}
	return -1
}

func TestKubernetesManifests(t *testing.T) {
	m := manifests(t)
	for _, kind := range []string{"Deployment", "Service", "ConfigMap", "HorizontalPodAutoscaler"} {
		if m[kind] == nil {
			t.Fatalf("deploy/kubernetes has no %s", kind)
		}
	}
	dep := m["Deployment"]
	pod := at(t, dep, "spec", "template", "spec")
	c := at(t, pod, "containers", 0)
	env := map[string]any{}
	for _, e := range at(t, c, "env").([]any) {
		env[e.(map[string]any)["name"].(string)] = e.(map[string]any)["value"]
	}
	port := num(at(t, c, "ports", 0, "containerPort"))
	if at(t, c, "ports", 0, "name") != "http" || port != num(env["BREAD_PORT"]) {
		t.Errorf("container port %d named %v, BREAD_PORT %v", port, at(t, c, "ports", 0, "name"), env["BREAD_PORT"])
	}
	for _, e := range []string{"DATABASE_URL", "REDIS_URL", "BREAD_HOST", "BREAD_LOG_FORMAT"} {
		if _, ok := env[e]; !ok {
			t.Errorf("the container sets no %s", e)
		}
	}
	for probe, path := range map[string]string{"livenessProbe": "/healthz", "startupProbe": "/healthz", "readinessProbe": "/readyz"} {
		if got := at(t, c, probe, "httpGet", "path"); got != path {
			t.Errorf("%s path %v, want %s", probe, got, path)
		}
		if got := at(t, c, probe, "httpGet", "port"); got != "http" && num(got) != port {
			t.Errorf("%s port %v, want http or %d", probe, got, port)
		}
	}
	if at(t, pod, "securityContext", "runAsNonRoot") != true || num(at(t, pod, "securityContext", "runAsUser")) == 0 {
		t.Errorf("the pod may run as root")
	}
	if got := at(t, m["Service"], "spec", "ports", 0, "targetPort"); got != "http" {
		t.Errorf("service targetPort %v", got)
	}
	if got := at(t, m["Service"], "spec", "selector", "app.kubernetes.io/name"); got != at(t, dep, "spec", "template", "metadata", "labels", "app.kubernetes.io/name") {
		t.Errorf("the service selects %v, not the pods", got)
	}
	if got := at(t, m["HorizontalPodAutoscaler"], "spec", "scaleTargetRef", "name"); got != at(t, dep, "metadata", "name") {
		t.Errorf("the HPA scales %v", got)
	}

	// The ConfigMap's bread.yaml: probes public, a drain shorter than the
	// grace period, and a project `bread build` accepts.
	yml := at(t, m["ConfigMap"], "data", "bread.yaml").(string)
	for _, want := range []string{"health.live", "health.ready", "type: postgres", "type: redis"} {
		if !strings.Contains(yml, want) {
			t.Errorf("the ConfigMap's bread.yaml lacks %q", want)
		}
	}
	drain := regexp.MustCompile(`drainTimeout: (\d+)s`).FindStringSubmatch(yml)
	if drain == nil || num(drain[1]) >= num(at(t, pod, "terminationGracePeriodSeconds")) {
		t.Errorf("drainTimeout %v not below terminationGracePeriodSeconds %v", drain, at(t, pod, "terminationGracePeriodSeconds"))
	}
	dir := project(t, basic(map[string]string{"bread.yaml": yml}))
	env2 := map[string]string{"DATABASE_URL": "postgres://u@db:5432/bread", "REDIS_URL": "redis://redis:6379/0", "BREAD_API_KEY": strings.Repeat("k", 40)}
	lookup := func(k string) (string, bool) { v, ok := env2[k]; return v, ok }
	if r := run(t, cli.Options{LookupEnv: lookup}, "build", "--cwd", dir); r.code != 0 {
		t.Fatalf("bread build refuses the ConfigMap's bread.yaml: %+v", r)
	}
}

// The ConfigMap's bread.yaml served for real on PostgreSQL and Redis, as
// in the pod: the probes and /metrics answer without credentials from a
// pod address, every other route asks for the API key.
func TestConfigMapServesProbesWithoutCredentials(t *testing.T) {
	pg, rd := services(t)
	yml := at(t, manifests(t)["ConfigMap"], "data", "bread.yaml").(string)
	dir := project(t, basic(map[string]string{"bread.yaml": yml}))
	key := strings.Repeat("k", 40)
	p := startServe(t, dir, []string{"DATABASE_URL=" + freshSchema(t, pg), "REDIS_URL=" + rd, "BREAD_API_KEY=" + key})
	get := func(path, auth string) int {
		req, _ := http.NewRequest("GET", p.base+path, nil)
		req.Host = "10.0.0.9:3000"
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/agents": 401} {
		if got := get(path, ""); got != want {
			t.Errorf("GET %s without credentials = %d, want %d", path, got, want)
		}
	}
	if got := get("/agents", key); got != 200 {
		t.Errorf("GET /agents with the key = %d", got)
	}
	b := waitReady(t, p.base, 200)
	if !slicesHas(b.Checks, "bus", true) || !slicesHas(b.Checks, "store", true) {
		t.Errorf("/readyz on PostgreSQL and Redis checks no store or bus: %+v", b)
	}
}

// The Dockerfile: a static pure-Go build, an empty base, a non-root user,
// the port bread listens on, and `start` as the entry point.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(df, -1)
	if len(froms) < 2 || froms[len(froms)-1][1] != "scratch" {
		t.Errorf("not a multi-stage build ending FROM scratch: %v", froms)
	}
	for _, want := range []string{"CGO_ENABLED=0", "./cli/cmd/bread", "ENTRYPOINT [\"/bread\"", "\"start\"]", "EXPOSE 3000", "BREAD_PORT=3000"} {
		if !strings.Contains(df, want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
	user := regexp.MustCompile(`(?m)^USER\s+(\d+)`).FindStringSubmatch(df)
	if user == nil || user[1] == "0" {
		t.Errorf("the image runs as root: %v", user)
	}
}
