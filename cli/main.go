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
	flags   bool // run parses flags with a.parse, which answers --help
}

func commands() []command {
	return []command{
		{"dev", "dev [-p port] [-H host] [--record FILE]", "serve the project and reload on file changes", cmdDev, true},
		{"start", "start [-p port] [-H host] [--record FILE] [--log-format text|json] [--log-level LEVEL] [--drain-timeout D]", "serve the project (SIGTERM drains)", cmdStart, true},
		{"build", "build", "check every agent is complete", cmdBuild, false},
		{"chat", "chat [agent] [-s session] [--skill skill]", "talk to an agent in the terminal", cmdChat, true},
		{"invoke", "invoke <agent> [input] [--json] [--trace] [-s session] [--skill skill] [--record FILE] [--background [--webhook URL]]", "run an agent once (input from stdin when omitted)", cmdInvoke, true},
		{"eval", "eval [path]", "run the evals of the project (or under path)", cmdEval, false},
		{"sessions", "sessions list [--tag k=v] | sessions cleanup --older-than DAYS [--tag k=v]", "list or delete sessions", cmdSessions, true},
		{"runs", "runs get <runId> | runs list [--agent A] [--status S] | runs cancel <runId> [--json]", "read, list or cancel runs through the store", cmdRuns, true},
		{"schedules", "schedules [--json]", "list bread.yaml's schedules and their next tick", cmdSchedules, true},
		{"provider", "provider list | provider add <name>", "list the model providers, or add one to bread.yaml", cmdProvider, false},
		{"init", "init [dir] [--force]", "scaffold a new project that runs offline", cmdInit, true},
		{"mcp", "mcp", "serve the project's mcpserver plugin over stdio, for MCP clients that launch it", cmdMCP, true},
		{"version", "version", "print the version (also bread --version)", cmdVersion, false},
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
	global := globalFlags()
	cwd := global.Lookup("cwd").Value
	err := global.Parse(args)
	help := global.Lookup("help").Value.String() == "true"
	switch {
	case errors.Is(err, flag.ErrHelp) || help || (err == nil && global.NArg() > 0 && global.Arg(0) == "help" && global.NArg() == 1):
		a.usage(a.stdout)
		return ExitOK
	case err == nil && global.Lookup("version").Value.String() == "true":
		return cmdVersion(context.Background(), a, nil)
	case err != nil || global.NArg() == 0:
		if err != nil {
			fmt.Fprintln(a.stderr, "bread:", err)
		}
		a.usage(a.stderr)
		return ExitUsage
	}
	name, rest := global.Arg(0), global.Args()[1:]
	if name == "help" {
		// bread help CMD is bread CMD --help.
		name, rest = rest[0], append([]string{"--help"}, rest[1:]...)
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		if !c.flags && wantsHelp(rest) {
			a.commandHelp(a.stdout, c, nil)
			return ExitOK
		}
		dir, cwdRest, err := extractCwd(rest, cwd.String())
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
	a.usage(a.stderr)
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

// globalFlags are the flags before the command.
func globalFlags() *flag.FlagSet {
	global := flag.NewFlagSet("bread", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	global.String("cwd", ".", "project directory (every command also takes --cwd DIR)")
	global.Bool("help", false, "print this help")
	global.Bool("version", false, "print the version")
	return global
}

// usage prints the commands and the global flags to w.
func (a *app) usage(w io.Writer) {
	fmt.Fprintln(w, "usage: bread [--cwd DIR] <command> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nflags:")
	global := globalFlags()
	global.SetOutput(w)
	global.PrintDefaults()
	fmt.Fprintln(w, "\nevery command takes --cwd DIR to work on a project elsewhere;")
	fmt.Fprintln(w, "bread help CMD or bread CMD --help describes one command")
}

// wantsHelp reports whether args ask for help (-h, -help or --help) before
// any "--".
func wantsHelp(args []string) bool {
	for _, arg := range args {
		switch arg {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// commandHelp prints a command's usage, summary and flags (fs, when it has
// any) to w.
func (a *app) commandHelp(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintln(w, "usage: bread", c.usage)
	fmt.Fprintln(w)
	fmt.Fprintln(w, c.summary)
	fmt.Fprintln(w, "\nflags:")
	if fs != nil {
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	fmt.Fprintln(w, "  -cwd string\n    \tproject directory")
}

// parse parses flags interspersed with positional arguments. On -h, -help
// or --help it prints the command's help to stdout and returns an error
// wrapping flag.ErrHelp, which usageError turns into ExitOK.
func (a *app) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				for _, c := range commands() {
					if c.name == fs.Name() {
						a.commandHelp(a.stdout, c, fs)
					}
				}
			}
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
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK // parse printed the help
	}
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
