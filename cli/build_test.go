package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/breadai/bread/cli"
)

// TestBuildRefusesWhatCannotServe: each project here used to pass `bread
// build` and then fail at listen or on every run. Each now fails the build
// with INVALID_CONFIG and a message naming the problem; the example as
// shipped, and allow lists naming plugin-mounted actions, still pass.
func TestBuildRefusesWhatCannotServe(t *testing.T) {
	const auth = "server:\n  auth:\n    - type: apikey\n      keys: [k]\n"
	for _, tt := range []struct {
		name    string
		edit    map[string]func(string) string // file -> edit
		remove  string
		wantErr string // "" = the build passes
	}{
		{name: "as shipped"},
		{name: "allow naming plugin routes", edit: appendYAML(auth + "      allow: [run.start, run.resume, run.file.read, run.streamToken]\n")},
		{name: "port out of range", edit: appendYAML("server: {port: 99999}\n"), wantErr: "bread.yaml:6: INVALID_CONFIG: port 99999"},
		{name: "negative maxBodyBytes", edit: appendYAML("server: {maxBodyBytes: -5}\n"), wantErr: "bread.yaml:6: INVALID_CONFIG: maxBodyBytes -5"},
		{name: "misspelt allow action", edit: appendYAML(auth + "      allow: [run.creat]\n"), wantErr: `INVALID_CONFIG: apikey: allow names unknown action "run.creat"`},
		{name: "misspelt public action", edit: appendYAML(auth + "  public: [health.lve]\n"), wantErr: `unknown action "health.lve"`},
		{name: "unknown sqlite option", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: sqlite, path: ./bread.db, journl: wal}", 1)
		}}, wantErr: `unknown field "journl"`},
		{name: "memory store with a retention", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: memory, retainRuns: 500}", 1)
		}}},
		{name: "unknown memory option", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: memory, retain: 500}", 1)
		}}, wantErr: `unknown field "retain"`},
		{name: "postgres URL that does not parse", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: postgres, url: \"postgres://a b\"}", 1)
		}}, wantErr: "bread.yaml:5: INVALID_CONFIG: postgres store"},
		{name: "mysql store", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: mysql, url: \"bread:pw@tcp(db:3306)/bread\", maxOpenConns: 4}", 1)
		}}},
		{name: "unknown mysql option", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: mysql, url: \"bread:pw@tcp(db:3306)/bread\", maxOpenConn: 4}", 1)
		}}, wantErr: `bread.yaml:5: INVALID_CONFIG: mysql options: json: unknown field "maxOpenConn"`},
		{name: "mysql URL without a database", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: mysql, url: \"bread:pw@tcp(db:3306)/\"}", 1)
		}}, wantErr: "bread.yaml:5: INVALID_CONFIG: mysql store: Options.URL names no database"},
		{name: "mysql store with background runs", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: mysql, url: \"bread:pw@tcp(db:3306)/bread\"}\nworkers: {concurrency: 2}", 1)
		}}, wantErr: "bread.yaml:5: INVALID_CONFIG: a mysql store cannot hold the job queue"},
		{name: "mysql store with schedules", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: mysql, url: \"bread:pw@tcp(db:3306)/bread\"}\nschedules: [{name: t, every: 1m, agent: publisher, input: x}]", 1)
		}}, wantErr: "bread.yaml:5: INVALID_CONFIG: a mysql store cannot hold the job queue that workers: and schedules: need (River, the durable queue, has no MySQL driver, and an in-process queue would run each job or tick on every replica): put the queue on a postgres or sqlite database of its own with workers.database"},
		{name: "mysql store with its queue on postgres", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: mysql, url: \"bread:pw@tcp(db:3306)/bread\"}\nworkers:\n  database: {type: postgres, url: \"postgres://q@db:5432/jobs\", schema: jobs}\nschedules: [{name: t, every: 1m, agent: publisher, input: x}]", 1)
		}}},
		{name: "mysql store with its queue on sqlite", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: mysql, url: \"bread:pw@tcp(db:3306)/bread\"}\nworkers: {concurrency: 2, database: {type: sqlite, path: ./bread.db}}", 1)
		}}},
		{name: "misspelt workers.database option", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: mysql, url: \"bread:pw@tcp(db:3306)/bread\"}\nworkers:\n  concurrency: 2\n  database: {type: postgres, ulr: \"postgres://q@db/jobs\"}", 1)
		}}, wantErr: `bread.yaml:8: INVALID_CONFIG: postgres options: json: unknown field "ulr"`},
		{name: "workers.database without its url", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: mysql, url: \"bread:pw@tcp(db:3306)/bread\"}\nworkers:\n  database: postgres", 1)
		}}, wantErr: "bread.yaml:7: INVALID_CONFIG: workers.database of type postgres needs a url"},
		{name: "workers.database on mysql", edit: map[string]func(string) string{"bread.yaml": func(s string) string {
			return strings.Replace(s, "store: {type: sqlite, path: ./bread.db}", "store: {type: mysql, url: \"bread:pw@tcp(db:3306)/bread\"}\nworkers:\n  database: {type: mysql, url: \"bread:pw@tcp(db:3306)/jobs\"}", 1)
		}}, wantErr: `bread.yaml:7: INVALID_CONFIG: unknown workers.database type "mysql" (River, the job queue, runs on postgres or sqlite); known: postgres, sqlite`},
		{name: "missing transcript", remove: "transcripts/publisher.jsonl", wantErr: `agents/publisher/agent.yaml:4: INVALID_CONFIG: replay transcript`},
		{name: "malformed transcript", edit: map[string]func(string) string{"transcripts/publisher.jsonl": func(s string) string { return s + "{bad\n" }},
			wantErr: "not a JSON event"},
		{name: "tool schema that does not compile", edit: map[string]func(string) string{"agents/publisher/tools/publish.yaml": func(s string) string {
			return strings.Replace(s, "required: [title, body]", "required: 5", 1)
		}}, wantErr: "agents/publisher/tools/publish.yaml:8: INVALID_CONFIG: inputSchema is not a valid JSON Schema"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS("../examples/hitl-approval")); err != nil {
				t.Fatal(err)
			}
			for file, edit := range tt.edit {
				path := filepath.Join(dir, file)
				src, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				out := edit(string(src))
				if out == string(src) {
					t.Fatalf("the edit of %s changed nothing: the example moved on", file)
				}
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.remove != "" {
				if err := os.Remove(filepath.Join(dir, tt.remove)); err != nil {
					t.Fatal(err)
				}
			}
			r := run(t, cli.Options{}, "build", "--cwd", dir)
			if _, err := os.Stat(filepath.Join(dir, "bread.db")); err == nil {
				t.Error("build created the SQLite store: it must touch no store")
			}
			if tt.wantErr == "" {
				if r.code != 0 {
					t.Fatalf("build failed: %+v", r)
				}
				return
			}
			if r.code == 0 || !strings.Contains(r.stderr, tt.wantErr) {
				t.Fatalf("build: code %d, stderr %q; want a failure containing %q", r.code, r.stderr, tt.wantErr)
			}
		})
	}
}

func appendYAML(extra string) map[string]func(string) string {
	return map[string]func(string) string{"bread.yaml": func(s string) string { return s + extra }}
}
