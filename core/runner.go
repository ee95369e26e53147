package core

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"
)

// runAgent runs one agent to completion, emitting its crumbs. It is the
// minimal runner: one model call, text output, history from the session.
func (in *Instance) runAgent(ctx context.Context, e *emitter, agentID string, input any, opts RunOptions) error {
	agent, ok := in.agents[agentID]
	if !ok {
		return Errorf(CodeAgentNotFound, "agent %s not found", quoteTruncated(agentID))
	}
	started := time.Now()

	session, err := in.openSession(ctx, agentID, opts.Session)
	if err != nil {
		return err
	}
	runID := newID()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer in.trackRun(runID, cancel)()

	base := CrumbBase{AgentID: agentID, RunID: runID, SessionID: session.ID}
	stamp := func() CrumbBase { b := base; b.Timestamp = NowMillis(); return b }
	failed := func(err error) error {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			err = cause
		}
		e.fail(base, err)
		return err
	}

	if !e.emit(&AgentRunStart{CrumbBase: stamp(), Input: input, Skill: opts.Skill}) {
		return nil
	}

	history, err := in.history(ctx, session.ID)
	if err != nil {
		return failed(err)
	}
	userMsg := Message{Role: RoleUser, Parts: []Part{TextPart(inputText(input))}}
	messages := append(history, userMsg)

	model, err := ResolveModel(agent.Model, agent.Providers, in.cfg.Providers)
	if err != nil {
		return failed(err)
	}
	req := ModelRequest{System: agent.Prompt, Messages: messages, Settings: agent.Model.Settings, ProviderOptions: agent.Model.ProviderOptions}
	var text strings.Builder
	for ev, err := range model.Stream(ctx, req) {
		if err != nil {
			return failed(err)
		}
		if ev.Type == EventTextDelta && ev.Delta != "" {
			text.WriteString(ev.Delta)
			if !e.emit(&TextDelta{CrumbBase: stamp(), Delta: ev.Delta}) {
				return nil
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return failed(context.Cause(ctx))
	}

	out := text.String()
	assistant := Message{Role: RoleAssistant, Parts: []Part{TextPart(out)}}
	if err := in.persist(ctx, session.ID, userMsg, assistant); err != nil {
		return failed(err)
	}
	e.emit(&AgentRunEnd{CrumbBase: stamp(), Output: out, DurationMs: time.Since(started).Milliseconds()})
	return nil
}

// openSession continues the session named in opts, or creates one.
func (in *Instance) openSession(ctx context.Context, agentID string, opts SessionOptions) (Session, error) {
	if opts.ID != "" {
		s, err := in.store.GetSession(ctx, opts.ID)
		if err == nil {
			return s, nil
		}
		if !isCode(err, CodeSessionNotFound) {
			return Session{}, err
		}
	}
	return in.store.CreateSession(ctx, NewSession{ID: opts.ID, Tags: opts.Tags, AgentID: agentID})
}

// history reads a session's persisted messages back into model messages.
func (in *Instance) history(ctx context.Context, sessionID string) ([]Message, error) {
	stored, err := in.store.GetMessages(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := make([]Message, 0, len(stored)+1)
	for _, m := range stored {
		var msg Message
		if err := json.Unmarshal(m.Content, &msg); err != nil {
			return nil, Errorf(CodeStoreError, "session %s holds a malformed message %s: %w", sessionID, m.ID, err)
		}
		out = append(out, msg)
	}
	return out, nil
}

// persist appends messages to a session in order.
func (in *Instance) persist(ctx context.Context, sessionID string, msgs ...Message) error {
	for _, m := range msgs {
		content, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if err := in.store.AddMessage(ctx, sessionID, SessionMessage{Role: m.Role, Content: content, Timestamp: NowMillis()}); err != nil {
			return err
		}
	}
	return nil
}

// inputText is how a run's input reaches the model: a string as is, anything
// else as JSON.
func inputText(input any) string {
	switch v := input.(type) {
	case string:
		return v
	case json.RawMessage:
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		return string(v)
	}
	b, err := json.Marshal(input)
	if err != nil {
		return ""
	}
	return string(b)
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

func isCode(err error, code string) bool {
	be := AsBreadError(err, "")
	return be != nil && be.Code == code
}
