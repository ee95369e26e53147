package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"iter"
	"strings"

	"github.com/breadai/bread/core"
	"github.com/google/uuid"
)

// cmdChat is an interactive conversation with one agent. One session holds
// every turn; when the agent needs a human, chat asks inline and resumes
// from the store. /exit, /quit or end of input leave.
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
		*session = "chat-" + uuid.NewString()
	}
	fmt.Fprintf(a.stdout, "chatting with %s (session %s); /exit to leave\n", agentID, *session)
	in := bufio.NewScanner(a.stdin)
	in.Buffer(make([]byte, 0, 64<<10), 1<<20)
	// Everything a run emits is printed as it passes the engine; a human
	// request is asked below instead.
	defer inst.On(a.printer(a.stdout, *verbose, func(c core.Crumb) bool {
		_, human := c.(*core.HumanRequired)
		return !human
	}).Listen)()
	for {
		fmt.Fprint(a.stdout, "> ")
		if !in.Scan() {
			fmt.Fprintln(a.stdout)
			return ExitOK
		}
		line := strings.TrimSpace(in.Text())
		switch line {
		case "":
			continue
		case "/exit", "/quit":
			return ExitOK
		}
		stream := inst.Run(ctx, agentID, parseInput(line), core.RunOptions{Session: core.SessionOptions{ID: *session}, Skill: *skill})
		for stream != nil {
			hr, ok := a.showTurn(stream)
			if !ok {
				return ExitOK // the input ended while a human was needed
			}
			stream = nil
			if hr != nil {
				answer, ok := a.askHuman(in, hr)
				if !ok {
					fmt.Fprintln(a.stdout)
					return ExitOK
				}
				stream = inst.Resume(ctx, hr.CheckpointID, answer)
			}
		}
		if ctx.Err() != nil {
			return ExitOK
		}
	}
}

// showTurn drains a stream (the printer listening on the instance shows
// it) and returns the human request it ended on, if any.
func (a *app) showTurn(stream iter.Seq2[core.Crumb, error]) (*core.HumanRequired, bool) {
	var hr *core.HumanRequired
	for c := range stream {
		if h, ok := c.(*core.HumanRequired); ok {
			hr = h
		}
	}
	return hr, true
}

// askHuman prompts for a human tool's answer (JSON or text) or an
// approval (y/N).
func (a *app) askHuman(in *bufio.Scanner, hr *core.HumanRequired) (any, bool) {
	if hr.Kind == core.HumanApproval {
		fmt.Fprintf(a.stdout, "? %s wants to run %s with %s. Approve? [y/N] ", hr.AgentID, hr.ToolName, pretty(hr.Schema))
		if !in.Scan() {
			return nil, false
		}
		yes := strings.ToLower(strings.TrimSpace(in.Text()))
		return map[string]bool{"approved": yes == "y" || yes == "yes"}, true
	}
	prompt := hr.Prompt
	if prompt == "" {
		prompt = "answer"
	}
	fmt.Fprintf(a.stdout, "? %s asks (%s): %s\n  request: %s\n? ", hr.AgentID, hr.ToolName, prompt, pretty(hr.Schema))
	if !in.Scan() {
		return nil, false
	}
	return parseInput(in.Text()), true
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
