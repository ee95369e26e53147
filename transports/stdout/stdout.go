package stdout

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/breadai/bread/core"
)

// ColorMode says when to use ANSI colours.
type ColorMode uint8

const (
	// ColorAuto colours when the writer is a terminal and NO_COLOR is unset.
	ColorAuto ColorMode = iota
	ColorAlways
	ColorNever
)

// Options configure a Printer.
type Options struct {
	// Writer receives the rendering (default os.Stdout).
	Writer io.Writer
	Color  ColorMode
	// Reasoning shows reasoning deltas (dimmed).
	Reasoning bool
	// Verbose shows run, step, loop and task framing.
	Verbose bool
	// MaxResultBytes truncates tool results and arguments (default 200).
	MaxResultBytes int
	// Filter, when set, selects the crumbs to print; nil prints every crumb
	// the rendering covers.
	Filter func(core.Crumb) bool
	// Getenv reads NO_COLOR (default os.Getenv); tests replace it.
	Getenv func(string) string
}

// Printer renders crumbs. It is a listener, not a bus: register Listen with
// the engine (inst.On(p.Listen)) and it prints every crumb of every run next
// to whatever else serves them (HTTP streams, the bus), or call Print for
// the crumbs of a stream you range over. It is safe for concurrent use;
// each crumb is written whole.
type Printer struct {
	w       io.Writer
	color   bool
	opts    Options
	mu      sync.Mutex
	midLine bool // the last write left the cursor after streamed text
}

var _ core.Listener = (*Printer)(nil).Listen

// New returns a terminal renderer.
func New(opts Options) *Printer {
	if opts.Writer == nil {
		opts.Writer = os.Stdout
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = 200
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	t := &Printer{w: opts.Writer, opts: opts}
	switch opts.Color {
	case ColorAlways:
		t.color = true
	case ColorAuto:
		t.color = isTerminal(opts.Writer) && opts.Getenv("NO_COLOR") == ""
	}
	return t
}

// isTerminal reports whether w is a character device.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Print renders one crumb (unless Options.Filter refuses it) and returns
// the writer's error.
func (t *Printer) Print(c core.Crumb) error {
	if c == nil || (t.opts.Filter != nil && !t.opts.Filter(c)) {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.render(c)
}

// Listen is Print as a core.Listener, for the engine's On. A listener runs
// on the run's goroutine, so a writer that blocks slows the run; the
// writer's errors are dropped (a closed terminal must not fail runs).
func (t *Printer) Listen(_ context.Context, c core.Crumb) {
	_ = t.Print(c)
}

const (
	dim    = "\x1b[2m"
	bold   = "\x1b[1m"
	red    = "\x1b[31m"
	green  = "\x1b[32m"
	yellow = "\x1b[33m"
	cyan   = "\x1b[36m"
	reset  = "\x1b[0m"
)

func (t *Printer) paint(style, s string) string {
	if !t.color {
		return s
	}
	return style + s + reset
}

// stream writes streamed text, staying on the line.
func (t *Printer) stream(s string) error {
	t.midLine = !strings.HasSuffix(s, "\n")
	_, err := io.WriteString(t.w, s)
	return err
}

// line writes a block on its own line.
func (t *Printer) line(s string) error {
	prefix := ""
	if t.midLine {
		prefix = "\n"
	}
	t.midLine = false
	_, err := io.WriteString(t.w, prefix+s+"\n")
	return err
}

func (t *Printer) symbol(fancy, plain string) string {
	if t.color {
		return fancy
	}
	return plain
}

func (t *Printer) render(c core.Crumb) error {
	switch v := c.(type) {
	case *core.TextDelta:
		return t.stream(v.Delta)
	case *core.ReasoningDelta:
		if t.opts.Reasoning {
			return t.stream(t.paint(dim, v.Delta))
		}
	case *core.ToolCall:
		return t.line(t.paint(cyan, t.symbol("⚙ ", "> ")+v.ToolName) + t.paint(dim, "("+t.brief(v.Args)+")"))
	case *core.ToolResultPartial:
		return t.line(t.paint(dim, "  … "+v.ToolName+" "+t.brief(v.Result)))
	case *core.ToolResult:
		return t.line(t.paint(green, t.symbol("  ✓ ", "  < ")+v.ToolName) + " " + t.brief(v.Result))
	case *core.ToolError:
		return t.line(t.paint(red, t.symbol("  ✗ ", "  ! ")+v.ToolName+": "+errText(v.Error)))
	case *core.HumanRequired:
		msg := "human input needed: " + v.ToolName
		if v.Kind == core.HumanApproval {
			msg = "approval needed: " + v.ToolName + "(" + t.brief(v.Schema) + ")"
		}
		if v.Prompt != "" {
			msg += ": " + v.Prompt
		}
		return t.line(t.paint(yellow, t.symbol("? ", "? ")+msg) + t.paint(dim, " [checkpoint "+v.CheckpointID+"]"))
	case *core.HumanResumed:
		return t.line(t.paint(dim, "resumed with "+t.brief(v.Response)))
	case *core.FileGenerated:
		return t.line(t.paint(cyan, t.symbol("📎 ", "file: ")+v.URI) + t.paint(dim, " ("+v.MimeType+")"))
	case *core.AgentError:
		return t.line(t.paint(red+bold, "error: ") + t.paint(red, errText(v.Error)))
	case *core.ToolInputStart, *core.ToolInputDelta, *core.ToolInputEnd:
		// A call's arguments as they stream: the tool:call line shows
		// them whole.
		return nil
	case *core.AgentRunEnd:
		if t.midLine {
			return t.line("")
		}
		if t.opts.Verbose {
			return t.line(t.paint(dim, fmt.Sprintf("■ %s done in %dms", v.AgentID, v.DurationMs)))
		}
	default:
		if t.opts.Verbose {
			return t.line(t.paint(dim, t.frame(c)))
		}
	}
	return nil
}

// frame describes structural crumbs in verbose mode.
func (t *Printer) frame(c core.Crumb) string {
	switch v := c.(type) {
	case *core.AgentRunStart:
		s := "▶ " + v.AgentID
		if v.Skill != "" {
			s += " (skill " + v.Skill + ")"
		}
		return s
	case *core.SubagentRunStart:
		return "▶ " + v.ParentAgentID + " → " + v.SubagentID
	case *core.SubagentRunEnd:
		return "■ " + v.SubagentID + " → " + t.brief(v.Output)
	case *core.PipelineStepStart:
		return fmt.Sprintf("▶ %s step %d (%s)", v.PipelineID, v.StepIndex, v.AgentID)
	case *core.PipelineStepEnd:
		return fmt.Sprintf("■ %s step %d → %s", v.PipelineID, v.StepIndex, t.brief(v.Output))
	case *core.LoopStart:
		return "↻ loop " + strings.Join(v.Pipeline, " → ")
	case *core.LoopIterationStart:
		return fmt.Sprintf("↻ iteration %d", v.Iteration)
	case *core.LoopIterationEnd:
		return fmt.Sprintf("↻ iteration %d → %s", v.Iteration, t.brief(v.Output))
	case *core.LoopEnd:
		return fmt.Sprintf("↻ loop %s after %d iterations", v.Status, v.Iterations)
	case *core.TaskStart:
		return "▶ task " + v.TaskID
	case *core.TaskEnd:
		return fmt.Sprintf("■ task %s %s in %dms", v.TaskID, v.Status, v.DurationMs)
	}
	return c.CrumbType()
}

// brief renders a payload as compact JSON, a string as it is, truncated.
func (t *Printer) brief(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.RawMessage:
		// A payload read back from a crumb log or a bus: a JSON string
		// prints as the string a live run's would.
		// Any other value prints compact, as a live run's marshalled one
		// does (a tool's own output may be spaced: Python's json.dumps).
		if json.Unmarshal(x, &s) != nil {
			var b bytes.Buffer
			if json.Compact(&b, x) == nil {
				s = b.String()
			} else {
				s = string(x)
			}
		}
	default:
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprint(v)
		} else {
			s = string(b)
		}
	}
	s = strings.ReplaceAll(s, "\n", " ")
	if n := t.opts.MaxResultBytes; len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

func errText(e *core.BreadError) string {
	if e == nil {
		return "unknown error"
	}
	return e.Code + ": " + e.Message
}
