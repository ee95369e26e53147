package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"maps"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/breadai/bread/core"
)

// ResumeWith is Resume with what the resuming client gives the
// continuation (core.ClientInput): its context, tools and state apply to
// the run from there on, as they would to a new run. A client tool's
// checkpoint is answered this way with the tool's result.
func (in *Instance) ResumeWith(ctx context.Context, checkpointID string, response any, client core.ClientInput) iter.Seq2[core.Crumb, error] {
	if client.IsZero() {
		return in.Resume(ctx, checkpointID, response)
	}
	return func(yield func(core.Crumb, error) bool) {
		if err := client.Validate(); err != nil {
			yield(nil, err)
			return
		}
		for c, err := range in.Resume(context.WithValue(ctx, resumeClientKey{}, client), checkpointID, response) {
			if !yield(c, err) {
				return
			}
		}
	}
}

// resumeClientKey carries ResumeWith's client input to resume, which
// builds the continuing run.
type resumeClientKey struct{}

func resumeClientFrom(ctx context.Context) core.ClientInput {
	ci, _ := ctx.Value(resumeClientKey{}).(core.ClientInput)
	return ci
}

// metaClientTool marks, in a checkpoint's Meta, a call of a client tool:
// its answer is the tool's result, as a human tool's is.
const metaClientTool = "bread.clientTool"

// clientToolMeta is meta with the client-tool mark, a copy.
func clientToolMeta(meta map[string]string) map[string]string {
	out := make(map[string]string, len(meta)+1)
	maps.Copy(out, meta)
	out[metaClientTool] = "true"
	return out
}

// isClientToolCall reports whether cp waits on a call of a client tool.
func isClientToolCall(cp core.CheckpointRecord) bool { return cp.Meta[metaClientTool] == "true" }

// StateToolName is the model-facing name of the built-in tool that changes
// the session's state document; a run has it when its client gave a state.
const StateToolName = "core_state_update"

// stateToolLeaf is StateToolName's name in ScopeCore.
const stateToolLeaf = "state_update"

// stateTool is core_state_update: the model changes the shared state with
// an RFC 6902 JSON Patch. The patch is applied to the run's copy of the
// state, stored with the session, and told to the stream as a
// tool:result:partial {"delta": [...]} before the tool returns, one patch at
// a time, so the order of the deltas on the stream is the order they were
// applied in even when the model calls the tool several times in a turn.
func (r *run) stateTool() core.Tool {
	return core.Tool{
		Name: stateToolLeaf,
		Description: "Change the shared state the user's application shows (given in the system prompt) with a JSON Patch (RFC 6902): " +
			"a list of operations add, remove, replace, move, copy or test, each with a JSON Pointer path. Returns the state after the patch.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"patch":{"type":"array","minItems":1,"items":{"type":"object",` +
			`"properties":{"op":{"type":"string","enum":["add","remove","replace","move","copy","test"]},"path":{"type":"string"},"from":{"type":"string"},"value":{}},` +
			`"required":["op","path"]}}},"required":["patch"]}`),
		Execute: func(ctx context.Context, args json.RawMessage, tc core.ToolContext) (any, error) {
			var in struct {
				Patch json.RawMessage `json:"patch"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, core.Errorf(core.CodeValidationError, "the arguments must be {\"patch\": [...]}: %v", err)
			}
			return r.patchState(ctx, in.Patch, tc)
		},
	}
}

// patchState applies patch to the run's state under stateMu, stores it and
// emits the delta.
func (r *run) patchState(ctx context.Context, patch json.RawMessage, tc core.ToolContext) (any, error) {
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, core.Errorf(core.CodeValidationError, "the patch is not a JSON Patch: %v", err)
	}
	r.stateMu.Lock()
	defer r.stateMu.Unlock()
	doc, err := r.currentState(ctx)
	if err != nil {
		return nil, err
	}
	if len(doc) == 0 {
		doc = []byte(`{}`)
	}
	next, err := p.ApplyWithOptions(doc, &jsonpatch.ApplyOptions{SupportNegativeIndices: false, EnsurePathExistsOnAdd: false})
	if err != nil {
		return nil, core.Errorf(core.CodeValidationError, "the patch does not apply to the state: %v", err)
	}
	if r.in.store.Has(core.StoreSessionState) {
		if err := r.in.store.PutSessionState(ctx, r.sessionID, next); err != nil {
			return nil, err
		}
	}
	r.state = next
	r.stateRev++
	_ = tc.Emit(&core.ToolResultPartial{Result: map[string]any{"delta": patch}})
	return map[string]any{"state": json.RawMessage(next)}, nil
}

// stateRevision counts the patches the run applied to its state.
func (r *run) stateRevision() int {
	r.stateMu.Lock()
	defer r.stateMu.Unlock()
	return r.stateRev
}

// currentState is the run's state document: the client's, once given, or
// the session's as stored. The caller holds stateMu.
func (r *run) currentState(ctx context.Context) ([]byte, error) {
	if r.state != nil {
		return r.state, nil
	}
	if !r.in.store.Has(core.StoreSessionState) {
		return nil, nil
	}
	doc, err := r.in.store.GetSessionState(ctx, r.sessionID)
	if err != nil {
		return nil, err
	}
	r.state = doc
	return doc, nil
}

// applyClientState stores the state the client gave (ClientInput.State) as
// the session's, before the run goes on: the client's state is the truth
// it shows its user. Without a store that keeps state it lives in the run.
func (r *run) applyClientState(ctx context.Context) error {
	if !r.opts.Client.HasState() {
		return nil
	}
	doc := bytes.TrimSpace(r.opts.Client.State)
	r.stateMu.Lock()
	defer r.stateMu.Unlock()
	r.state = doc
	if !r.in.store.Has(core.StoreSessionState) {
		return nil
	}
	return r.in.store.PutSessionState(ctx, r.sessionID, doc)
}

// clientSources are the client's tools (ScopeClient, answered by the
// client through a checkpoint like a human tool) and, when the client gave
// a state, core_state_update.
func (r *run) clientSources() []toolSource {
	ci := r.opts.Client
	var out []toolSource
	for _, t := range ci.Tools {
		desc := t.Description
		if desc == "" {
			desc = "A tool of the user's application: " + t.Name
		}
		out = append(out, toolSource{
			origin: core.ToolOrigin{Scope: core.ScopeClient, Name: t.Name},
			human:  &core.HumanToolDef{Name: t.Name, Description: desc, Schema: t.Parameters},
		})
	}
	if ci.HasState() {
		t := r.stateTool()
		out = append(out, toolSource{origin: core.ToolOrigin{Scope: core.ScopeCore, Name: t.Name}, tool: &t})
	}
	return out
}

// clientPrompt is the system prompt's section of the client's context and,
// when the run has the state tool, the current state.
func (r *run) clientPrompt(ctx context.Context) (string, error) {
	ci := r.opts.Client
	var b strings.Builder
	if len(ci.Context) > 0 {
		b.WriteString("Context from the user's application:")
		for _, c := range ci.Context {
			b.WriteString("\n- ")
			if c.Description != "" {
				b.WriteString(c.Description)
				b.WriteString(": ")
			}
			b.WriteString(c.Value)
		}
	}
	if ci.HasState() {
		r.stateMu.Lock()
		doc, err := r.currentState(ctx)
		r.stateMu.Unlock()
		if err != nil {
			return "", err
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("The shared state of the user's application (JSON; change it with " + StateToolName + "):\n")
		if len(doc) == 0 {
			doc = []byte(`{}`)
		}
		b.Write(doc)
	}
	return b.String(), nil
}
