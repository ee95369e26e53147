package engine

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/breadai/bread/core"
)

// taskRT is a task with its compiled schemas.
type taskRT struct {
	*core.Task
	input, output *compiledSchema
}

func compileTask(t *core.Task) (*taskRT, error) {
	if t == nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "Config.Tasks holds a nil task"}
	}
	if err := core.ValidateName("task", t.Name); err != nil {
		return nil, err
	}
	rt := &taskRT{Task: t}
	var err error
	if rt.input, err = compileSchema("task "+t.Name+" inputSchema", t.InputSchema); err != nil {
		return nil, err
	}
	if rt.output, err = compileSchema("task "+t.Name+" outputSchema", t.OutputSchema); err != nil {
		return nil, err
	}
	return rt, nil
}

func taskNotFound(in *Instance, id, agentID string) *core.BreadError {
	names := slices.Sorted(maps.Keys(in.tasks))
	be := &core.BreadError{Code: core.CodeTaskNotFound, Message: "task " + quoteTruncated(id) + " not found", Context: map[string]any{"taskId": id, "available": names}}
	if agentID != "" {
		be.Message = "agent " + agentID + " references unknown task " + quoteTruncated(id)
		be.Context["agentId"] = agentID
	}
	return be
}

// Tasks returns the registered tasks, sorted by name.
func (in *Instance) Tasks() []*core.Task {
	out := make([]*core.Task, 0, len(in.tasks))
	for _, name := range slices.Sorted(maps.Keys(in.tasks)) {
		out = append(out, in.tasks[name].Task)
	}
	return out
}

// TaskOptions attribute a standalone task run in its audit record.
type TaskOptions struct {
	AgentID   string
	SessionID string
	RunID     string
}

// RunTask runs a task standalone: hooks, retry and the TaskRunRecord audit
// apply in full, but there is no run stream, so it emits no crumbs. An
// unknown task is TASK_NOT_FOUND.
func (in *Instance) RunTask(ctx context.Context, taskID string, args any, opts TaskOptions) (any, error) {
	t, ok := in.tasks[taskID]
	if !ok {
		return nil, taskNotFound(in, taskID, "")
	}
	release, err := in.admit()
	if err != nil {
		return nil, err
	}
	defer release()
	return in.executeTask(ctx, t, args, taskCall{agentID: opts.AgentID, runID: opts.RunID, sessionID: opts.SessionID})
}

// taskCall is the run a task executes in, if any.
type taskCall struct {
	agentID, runID, sessionID string
	providers                 core.ProviderRegistry // the calling agent's own registry
	emit                      func(core.Crumb)      // nil for a standalone run
	creds                     core.CredentialProvider
}

// taskTool compiles a task into the tool an agent calls.
func (in *Instance) taskTool(t *taskRT, agent *core.Agent) core.Tool {
	return core.Tool{
		Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
		Execute: func(ctx context.Context, raw json.RawMessage, tc core.ToolContext) (any, error) {
			return in.executeTask(ctx, t, raw, taskCall{
				agentID: tc.AgentID, runID: tc.RunID, sessionID: tc.SessionID,
				providers: agent.Providers, emit: builtinEmit(tc), creds: tc.Credentials,
			})
		},
	}
}

// executeTask runs the task-scope hooks around the model call, with OnError
// and retry.
func (in *Instance) executeTask(ctx context.Context, t *taskRT, args any, call taskCall) (any, error) {
	if t.CheckInput != nil {
		if err := t.CheckInput(args); err != nil {
			return nil, err
		}
	} else if err := t.input.validate("arguments of task "+t.Name, args); err != nil {
		return nil, err
	}
	if call.agentID == "" {
		call.agentID = "standalone"
	}
	if call.runID == "" {
		call.runID = in.newID()
	}
	if call.sessionID == "" {
		call.sessionID = call.runID
	}
	hc := core.HookContext{Scope: core.HookTask, AgentID: call.agentID, RunID: call.runID, SessionID: call.sessionID, TaskName: t.Name, Credentials: call.creds, Store: in.store}
	chain := in.chain(t.Hooks)
	input, short, err := chain.before(ctx, hc, args)
	if err != nil {
		return nil, err
	}
	if short != nil {
		return chain.after(ctx, hc, input, short.Output, 0)
	}
	start := time.Now()
	rs := newRetryState(t.ErrorHandling.Retry)
	for {
		out, err := in.callTask(ctx, t, input, call)
		if err == nil {
			return chain.after(ctx, hc, input, out, time.Since(start))
		}
		if ctx.Err() != nil {
			return nil, err
		}
		be := core.AsBreadError(err, core.CodeTaskError)
		res, herr := chain.onError(ctx, hc, input, be)
		if herr != nil {
			return nil, herr
		}
		switch d, final := rs.decide(res, be); d {
		case decideRecover:
			return chain.after(ctx, hc, input, rs.recovered, time.Since(start))
		case decideFail:
			return nil, final
		}
		if err := rs.wait(ctx); err != nil {
			return nil, be
		}
	}
}

// callTask makes the task's model call, wrapped in task:start and task:end
// crumbs (inside a run) and a TaskRunRecord (when the store audits).
func (in *Instance) callTask(ctx context.Context, t *taskRT, input any, call taskCall) (any, error) {
	model, err := core.ResolveModel(t.Model, t.Providers, call.providers, in.cfg.Providers)
	if err != nil {
		return nil, err
	}
	rawInput, err := core.AsJSON(input)
	if err != nil {
		return nil, core.Errorf(core.CodeValidationError, "the input of task %s is not JSON: %w", t.Name, err)
	}
	id := in.newID()
	started := time.Now()
	audit := in.store.Has(core.StoreTaskRuns)
	rec := core.TaskRunRecord{ID: id, TaskID: t.Name, Model: core.TaskModelInfo{Provider: t.Model.Provider, Model: t.Model.Model}, Input: rawInput, Status: core.TaskRunning, CreatedAt: started.UnixMilli()}
	if call.emit != nil {
		rec.AgentID, rec.SessionID, rec.RunID = call.agentID, call.sessionID, call.runID
	}
	if audit {
		if err := in.store.CreateTaskRun(ctx, rec); err != nil {
			in.log.Warn("bread: task run audit failed", "task", t.Name, "error", err)
			audit = false
		}
	}
	base := core.CrumbBase{AgentID: call.agentID, RunID: call.runID, SessionID: call.sessionID}
	emit := func(c core.Crumb) {
		if call.emit != nil {
			call.emit(c)
		}
	}
	b := base
	b.Timestamp = started.UnixMilli()
	emit(&core.TaskStart{CrumbBase: b, TaskRunID: id, TaskID: t.Name, Model: rec.Model})

	out, usage, err := in.taskModelCall(ctx, t, model, rawInput)
	d := time.Since(started)
	upd := core.TaskRunUpdate{Status: core.TaskCompleted, DurationMs: max(d.Milliseconds(), 1), CompletedAt: core.NowMillis()}
	end := &core.TaskEnd{TaskRunID: id, TaskID: t.Name, Status: core.TaskCompleted, DurationMs: d.Milliseconds()}
	if usage != (core.Usage{}) {
		upd.Usage, end.Usage = &usage, &usage
	}
	if err != nil {
		// The task:end crumb and the task run record reach clients: a
		// plain error's text stays in the log.
		ce, plain := clientError(err, core.CodeTaskError)
		msg := ce.Message
		if plain {
			in.log.Warn("bread: a task failed with an error not meant for clients; its task:end names only the task",
				append(runAttrs(call.runID, call.agentID, call.sessionID), "task", t.Name, "taskRunId", id, "error", err)...)
			msg = "task " + t.Name + " failed; the server logged why"
		}
		upd.Status, upd.Error = core.TaskFailed, msg
		end.Status, end.Error = core.TaskFailed, msg
	} else {
		upd.Output, _ = core.AsJSON(out)
	}
	if audit {
		if aerr := in.store.FinishTaskRun(context.WithoutCancel(ctx), id, upd); aerr != nil {
			in.log.Warn("bread: task run audit failed", "task", t.Name, "error", aerr)
		}
	}
	end.CrumbBase = base
	end.Timestamp = core.NowMillis()
	emit(end)
	return out, err
}

func (in *Instance) taskModelCall(ctx context.Context, t *taskRT, model core.LanguageModel, input json.RawMessage) (any, core.Usage, error) {
	schema := t.OutputSchema
	if schema == nil {
		schema = json.RawMessage(`{}`)
	}
	pretty, _ := json.MarshalIndent(json.RawMessage(input), "", "  ")
	req := core.ModelRequest{
		System:          t.Instructions,
		Messages:        []core.Message{{Role: core.RoleUser, Parts: []core.Part{core.TextPart("Input:\n" + string(pretty))}}},
		Output:          &core.OutputSpec{Name: t.Name, Schema: schema},
		Settings:        t.Model.Settings,
		ProviderOptions: t.Model.ProviderOptions,
	}
	var text []byte
	var usage core.Usage
	for ev, err := range model.Stream(ctx, req) {
		if err != nil {
			return nil, usage, err
		}
		switch ev.Type {
		case core.EventTextDelta:
			text = append(text, ev.Delta...)
		case core.EventFinish:
			usage = usage.Add(ev.Usage)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, usage, err
	}
	out, _, err := decodeStructured(string(text), t.DecodeOutput, t.output, "output of task "+t.Name)
	return out, usage, err
}
