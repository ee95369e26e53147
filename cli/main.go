package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// Exit codes.
const (
	ExitOK        = 0
	ExitFailure   = 1 // a run, an eval, a build check or the configuration failed
	ExitUsage     = 2 // bad flags or arguments
	ExitNeedsHITL = 3 // invoke refused a run that waits for a human
)

// command is one subcommand.
type command struct {
	name    string
	usage   string
	summary string
	run     func(ctx context.Context, a *app, args []string) int
}

func commands() []command {
	return []command{
		{"dev", "dev [-p port] [-H host] [--record FILE]", "serve the project and reload on file changes", cmdDev},
		{"start", "start [-p port] [-H host] [--record FILE] [--log-format text|json] [--log-level LEVEL] [--drain-timeout D]", "serve the project (SIGTERM drains)", cmdStart},
		{"build", "build", "check every agent is complete", cmdBuild},
		{"chat", "chat [agent] [-s session] [--skill skill]", "talk to an agent in the terminal", cmdChat},
		{"invoke", "invoke <agent> [input] [--json] [--trace] [-s session] [--skill skill] [--record FILE]", "run an agent once (input from stdin when omitted)", cmdInvoke},
		{"eval", "eval [path]", "run the evals of the project (or under path)", cmdEval},
		{"sessions", "sessions list [--tag k=v] | sessions cleanup --older-than DAYS [--tag k=v]", "list or delete sessions", cmdSessions},
		{"provider", "provider list | provider add <name>", "list the model providers, or add one to bread.yaml", cmdProvider},
		{"init", "init [dir]", "scaffold a new project that runs offline", cmdInit},
		{"mcp", "mcp", "serve the project's mcpserver plugin over stdio, for MCP clients that launch it", cmdMCP},
	}
}

// Main runs the bread command line and returns its exit code.
func Main(opts Options) int {
	a := &app{opts: opts, stdin: opts.Stdin, stdout: opts.Stdout, stderr: opts.Stderr, lookup: opts.LookupEnv, log: opts.Logger}
	if a.stdin == nil {
		a.stdin = os.Stdin
	}
	if a.stdout == nil {
		a.stdout = os.Stdout
	}
	if a.stderr == nil {
		a.stderr = os.Stderr
	}
	if a.lookup == nil {
		a.lookup = os.LookupEnv
	}
	if a.log == nil {
		a.log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	args := opts.Args
	if args == nil {
		args = os.Args[1:]
	}
	global := flag.NewFlagSet("bread", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	cwd := global.String("cwd", ".", "project directory")
	help := global.Bool("help", false, "")
	if err := global.Parse(args); err != nil || *help || global.NArg() == 0 {
		a.usage()
		if *help {
			return ExitOK
		}
		return ExitUsage
	}
	name, rest := global.Arg(0), global.Args()[1:]
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		dir, cwdRest, err := extractCwd(rest, *cwd)
		if err != nil {
			fmt.Fprintln(a.stderr, "bread:", err)
			return ExitUsage
		}
		a.cwd, _ = filepath.Abs(dir)
		parent := opts.Context
		if parent == nil {
			parent = context.Background()
		}
		ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
		defer stop()
		return c.run(ctx, a, cwdRest)
	}
	fmt.Fprintf(a.stderr, "bread: unknown command %q\n", name)
	a.usage()
	return ExitUsage
}

// extractCwd takes --cwd from anywhere in a command's arguments, so it works
// on every command.
func extractCwd(args []string, def string) (string, []string, error) {
	var out []string
	dir := def
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--cwd" || a == "-cwd":
			if i+1 >= len(args) {
				return "", nil, errors.New("--cwd needs a directory")
			}
			dir = args[i+1]
			i++
		case strings.HasPrefix(a, "--cwd="), strings.HasPrefix(a, "-cwd="):
			dir = a[strings.Index(a, "=")+1:]
		default:
			out = append(out, a)
		}
	}
	return dir, out, nil
}

func (a *app) usage() {
	fmt.Fprintln(a.stderr, "usage: bread [--cwd DIR] <command> [flags]")
	fmt.Fprintln(a.stderr)
	for _, c := range commands() {
		fmt.Fprintf(a.stderr, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(a.stderr, "\nevery command takes --cwd DIR to work on a project elsewhere")
}

// parse parses flags interspersed with positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// usageError prints a command's usage and returns ExitUsage.
func (a *app) usageError(name string, err error) int {
	if err != nil {
		fmt.Fprintln(a.stderr, "bread:", err)
	}
	for _, c := range commands() {
		if c.name == name {
			fmt.Fprintln(a.stderr, "usage: bread", c.usage)
		}
	}
	return ExitUsage
}
