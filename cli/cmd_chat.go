package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"os/signal"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/google/uuid"
)

// cmdChat is an interactive conversation with one agent. One session holds
// every turn; when the agent needs a human, chat asks inline and resumes
// from the store. Ctrl-C cancels the run in flight and returns to the
// prompt; Ctrl-C at the prompt (status 130), /exit, /quit or end of input
// leave.
func cmdChat(ctx context.Context, a *app, args []string) int {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	session := fs.String("s", "", "session id to resume")
	fs.StringVar(session, "session", "", "session id to resume")
	skill := fs.String("skill", "", "skill for every turn")
	verbose := fs.Bool("v", false, "show run framing")
	pos, err := a.parse(fs, args)
	if err != nil || len(pos) > 1 {
		return a.usageError("chat", err)
	}
	if err := a.load(); err != nil {
		return a.fail(err)
	}
	if a.refuseToRun() {
		return ExitFailure
	}
	agentID, err := a.chatAgent(pos)
	if err != nil {
		return a.fail(err)
	}
	inst, _, err := a.started(ctx, modeTerminal)
	if err != nil {
		return a.fail(err)
	}
	defer inst.Stop(context.WithoutCancel(ctx))

	if *session == "" {
		// A bare random UUID: a remote server under session ownership
		// lets a caller name a new session only so (core.UnguessableSessionID).
		*session = uuid.Must(uuid.NewV7()).String()
	}
	fmt.Fprintf(a.stdout, "chatting with %s (session %s); /exit to leave\n", agentID, *session)
	// Ctrl-C belongs to the chat loop: it cancels the run in flight, or
	// leaves when none is (or on a second Ctrl-C). Main's context would
	// end on SIGINT, so the interrupt handlers registered before are reset;
	// SIGTERM and the embedder's context still end ctx.
	sig := make(chan os.Signal, 1)
	signal.Reset(os.Interrupt)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	done := make(chan struct{})
	defer close(done)
	lines := readLines(a.stdin, done)
	// Everything a run emits is printed as it passes the engine; a human
	// request is asked below instead.
	defer inst.On(a.printer(a.stdout, *verbose, func(c core.Crumb) bool {
		_, human := c.(*core.HumanRequired)
		return !human
	}).Listen)()
	// next waits for a line of input; it returns an exit code when the
	// chat should end instead.
	next := func() (string, int, bool) {
		select {
		case line, ok := <-lines:
			if !ok {
				fmt.Fprintln(a.stdout)
				return "", ExitOK, false
			}
			return line, 0, true
		case <-sig:
			fmt.Fprintln(a.stdout, "\ninterrupted; leaving the chat")
			return "", exitInterrupted, false
		case <-ctx.Done():
			fmt.Fprintln(a.stdout)
			return "", ExitOK, false
		}
	}
	for {
		fmt.Fprint(a.stdout, "> ")
		line, code, ok := next()
		if !ok {
			return code
		}
		line = strings.TrimSpace(line)
		switch line {
		case "":
			continue
		case "/exit", "/quit":
			return ExitOK
		}
		runCtx, cancel := context.WithCancel(ctx)
		stream := inst.Run(runCtx, agentID, parseInput(line), core.RunOptions{Session: core.SessionOptions{ID: *session}, Skill: *skill})
		// A turn may ask several humans at once (one checkpoint each); they
		// are asked in turn, and the run goes on after the last answer.
		var pending []*core.HumanRequired
		for stream != nil {
			hrs, code, leave := a.watchTurn(ctx, stream, sig, cancel)
			if leave {
				cancel()
				return code
			}
			if len(hrs) > 0 {
				// The latest stream lists everything the run still waits on.
				pending = hrs
			}
			stream = nil
			if len(pending) > 0 {
				hr := pending[0]
				pending = pending[1:]
				fmt.Fprint(a.stdout, a.humanPrompt(hr))
				text, code, ok := next()
				if !ok {
					cancel()
					return code
				}
				stream = inst.Resume(runCtx, hr.CheckpointID, humanAnswer(hr, text))
			}
		}
		cancel()
		if ctx.Err() != nil {
			return ExitOK
		}
	}
}

// exitInterrupted is the conventional status of a process ended by SIGINT.
const exitInterrupted = 130

// readLines reads r line by line on a goroutine owned by the caller: it
// stops at the end of input or, once done is closed, before handing on
// another line (a read already waiting on r ends with the process).
func readLines(r io.Reader, done <-chan struct{}) <-chan string {
	out := make(chan string)
	go func() {
		defer close(out)
		in := bufio.NewScanner(r)
		in.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for in.Scan() {
			select {
			case out <- in.Text():
			case <-done:
				return
			}
		}
	}()
	return out
}

// watchTurn shows a run until it ends while watching for Ctrl-C: the
// first cancels the run (the chat goes on once it has ended), a second
// leaves. It returns the human requests the run ended on, if any, or leave
// and an exit code.
func (a *app) watchTurn(ctx context.Context, stream iter.Seq2[core.Crumb, error], sig <-chan os.Signal, cancel context.CancelFunc) ([]*core.HumanRequired, int, bool) {
	turn := make(chan []*core.HumanRequired, 1) // buffered: the drain never waits on us
	go func() {
		turn <- a.showTurn(stream)
	}()
	interrupted, ending := false, ctx.Done()
	for {
		select {
		case hr := <-turn:
			if interrupted {
				fmt.Fprintln(a.stdout, "run cancelled")
				return nil, 0, false
			}
			if ctx.Err() != nil {
				return nil, ExitOK, true
			}
			return hr, 0, false
		case <-sig:
			if interrupted {
				fmt.Fprintln(a.stdout, "\ninterrupted again; leaving the chat")
				return nil, exitInterrupted, true
			}
			interrupted = true
			cancel() // the drain ends with the run
			fmt.Fprintln(a.stdout, "\ninterrupted; cancelling the run (Ctrl-C again to leave)")
		case <-ending:
			ending = nil
			cancel() // ctx ended (SIGTERM): the run ends, then the chat
		}
	}
}

// showTurn drains a stream (the printer listening on the instance shows
// it) and returns the human requests it ended on, in call order.
func (a *app) showTurn(stream iter.Seq2[core.Crumb, error]) []*core.HumanRequired {
	var hrs []*core.HumanRequired
	for c := range stream {
		if h, ok := c.(*core.HumanRequired); ok {
			hrs = append(hrs, h)
		}
	}
	return hrs
}

// humanPrompt is the question for a human tool's answer (JSON or text)
// or an approval (y/N).
func (a *app) humanPrompt(hr *core.HumanRequired) string {
	if hr.Kind == core.HumanApproval {
		return fmt.Sprintf("? %s wants to run %s with %s. Approve? [y/N] ", hr.AgentID, hr.ToolName, pretty(hr.Schema))
	}
	prompt := hr.Prompt
	if prompt == "" {
		prompt = "answer"
	}
	return fmt.Sprintf("? %s asks (%s): %s\n  request: %s\n? ", hr.AgentID, hr.ToolName, prompt, pretty(hr.Schema))
}

// humanAnswer reads the line typed at humanPrompt.
func humanAnswer(hr *core.HumanRequired, text string) any {
	if hr.Kind == core.HumanApproval {
		yes := strings.ToLower(strings.TrimSpace(text))
		return map[string]bool{"approved": yes == "y" || yes == "yes"}
	}
	return parseInput(text)
}

// chatAgent picks the agent: the one named, or the only one there is.
func (a *app) chatAgent(pos []string) (string, error) {
	if len(pos) == 1 {
		if _, ok := a.project.Agent(pos[0]); !ok {
			return "", core.Errorf(core.CodeAgentNotFound, "no agent %q in this project", pos[0])
		}
		return pos[0], nil
	}
	ids := a.project.Config.Entrypoints
	if len(ids) == 0 {
		for _, ag := range a.project.Agents {
			ids = append(ids, ag.ID)
		}
	}
	if len(ids) != 1 {
		return "", core.Errorf(core.CodeValidationError, "name the agent to chat with: this project has %d (%s)", len(ids), strings.Join(ids, ", "))
	}
	return ids[0], nil
}
