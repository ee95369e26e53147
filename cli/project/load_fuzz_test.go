package project_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
)

// FuzzLoad: whatever bread.yaml and agent.yaml hold, loading never panics
// and every refusal is a *project.Error or a *core.BreadError a user can
// read, never a bare Go error.
func FuzzLoad(f *testing.F) {
	f.Add("store: memory\n", "model: {provider: p, model: m}\n")
	f.Add("store: {type: sqlite, path: x.db}\nruns: {lease: 2s}\nstreams: {heartbeat: 5s}\n", "model: {provider: p, model: m}\npermissions: {ask: [\"tool:x\"]}\n")
	f.Add("entrypoints: [a]\npipelines: {p: [{agentId: a}]}\n", "inputSchema: {type: object}\nsupervisor: {agents: [{agentId: b}]}\n")
	f.Add("store: [\n", "model: ${NOPE}\n")
	f.Add("server: {auth: [{type: apikey, keys: [k]}]}\n", "tasks: [t]\nloop: {pool: [a], maxIterations: -1}\n")
	f.Add("store: ${S:-memory}\nserver: {port: ${P:-3000}, auth: {type: apikey, keys: [${K:-a: b # c}]}}\n# ${UNSET}\n", "description: |\n  $${x} ${D:-d}\nmodel: {provider: p, model: \"${M:-m}\"}\n")
	f.Add("store: memory\n__bread_var_7__: x\n", "description: __bread_var_0__\nmodel: {provider: p, model: m}\n")
	f.Fuzz(func(t *testing.T, breadYAML, agentYAML string) {
		dir := t.TempDir()
		for name, content := range map[string]string{"bread.yaml": breadYAML, "agents/a/agent.yaml": agentYAML} {
			path := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := project.Load(dir, project.Options{LookupEnv: func(string) (string, bool) { return "", false }})
		if err == nil {
			return
		}
		var pe *project.Error
		var be *core.BreadError
		if !errors.As(err, &pe) && !errors.As(err, &be) {
			t.Fatalf("a bare error: %T %v", err, err)
		}
	})
}
