package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/breadai/bread/core"
)

// scaffold is the project bread init writes: one assistant that answers from
// a replay transcript, so it runs offline, and switches to a real provider
// through BREAD_PROVIDER and BREAD_MODEL.
var scaffold = map[string]string{
	"bread.yaml": `# A bread project. See https://github.com/breadai/bread for every field.
entrypoints: [assistant]
store: {type: sqlite, path: ./bread.db}
# The bus is in-process (one replica); "bus: redis" shares runs across
# replicas. Every server streams NDJSON and SSE (Accept: text/event-stream).
# No providers section: every built-in provider is available by name,
# plus replay, which plays recorded transcripts.
`,
	"agents/assistant/agent.yaml": `description: A friendly assistant.
model:
  provider: ${BREAD_PROVIDER:-replay}
  model: ${BREAD_MODEL:-transcripts/assistant.jsonl}
inputSchema: {type: string}
outputSchema: {type: string}
output: {format: text}
`,
	"agents/assistant/prompt.md": "You are a friendly assistant. Answer in one or two sentences.\n",
	"agents/assistant/evals/basics.eval.yaml": `cases:
  - name: greets
    input: Hello!
    scorers:
      - {type: contains, expected: Hello}
`,
	"transcripts/assistant.jsonl": `{"call":0,"type":"text-delta","delta":"Hello! ","delayMs":20}
{"call":0,"type":"text-delta","delta":"I am your bread assistant, answering offline from a transcript.","delayMs":20}
{"call":0,"type":"finish","finishReason":"stop","usage":{"inputTokens":12,"outputTokens":14,"totalTokens":26}}
`,
	".gitignore": "bread.db*\n.bread/\n",
}

// cmdInit scaffolds a project in dir (default: --cwd). It never overwrites
// a file: when any file it would write exists it refuses and lists them,
// unless --force is given.
func cmdInit(ctx context.Context, a *app, args []string) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	force := fs.Bool("force", false, "overwrite the files init writes when they exist")
	args, err := a.parse(fs, args)
	if err != nil {
		return a.usageError("init", err)
	}
	if len(args) > 1 {
		return a.usageError("init", fmt.Errorf("at most one directory"))
	}
	dir := a.cwd
	if len(args) == 1 {
		dir = filepath.Join(a.cwd, args[0])
		if filepath.IsAbs(args[0]) {
			dir = args[0]
		}
	}
	var existing []string
	for path := range scaffold {
		if _, err := os.Lstat(filepath.Join(dir, path)); err == nil {
			existing = append(existing, path)
		}
	}
	if len(existing) > 0 && !*force {
		slices.Sort(existing)
		return a.fail(core.Errorf(core.CodeInvalidConfig, "init would overwrite files in %s: %s (--force overwrites them)", dir, strings.Join(existing, ", ")))
	}
	for path, content := range scaffold {
		full := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return a.fail(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return a.fail(err)
		}
	}
	fmt.Fprintf(a.stdout, "created a bread project in %s\n  bread --cwd %s invoke assistant \"Hello!\"\n  bread --cwd %s dev\n", dir, dir, dir)
	return ExitOK
}
