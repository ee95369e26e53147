package core

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// Task is a one-shot, stateless structured model call: no tool loop, no
// session, no HITL. An agent lists tasks by name (Agent.Tasks) and gets each
// as a task_<name> tool; Instance.RunTask runs one standalone.
//
// The model answers Instructions about the input with JSON matching
// OutputSchema, through its structured output. Hooks have the task scope:
// BeforeRun may reshape the input (load a document) or short-circuit,
// AfterRun may reshape the output (persist entities), OnError may recover
// or retry within ErrorHandling.Retry.
type Task struct {
	// Name is the task's id and tool name (lowercase snake_case).
	Name         string
	Description  string
	Model        ModelRef
	Providers    ProviderRegistry
	Instructions string
	// InputSchema validates the arguments; OutputSchema shapes the answer.
	InputSchema   json.RawMessage
	OutputSchema  json.RawMessage
	Hooks         Hooks
	ErrorHandling ErrorHandling

	checkInput   func(any) error
	decodeOutput func(json.RawMessage) (any, error)
}

// DefineTask completes t with schemas derived from A and O and typed
// validation of the arguments and the answer.
func DefineTask[A, O any](t Task) *Task {
	in, out := newTypedCodec[A](), newTypedCodec[O]()
	if t.InputSchema == nil {
		t.InputSchema = SchemaFor[A]()
	}
	if t.OutputSchema == nil {
		t.OutputSchema = SchemaFor[O]()
	}
	t.checkInput = func(v any) error { _, err := in.decode("task arguments", v); return err }
	t.decodeOutput = func(raw json.RawMessage) (any, error) { return out.decode("task output", raw) }
	return &t
}

// taskRT is a task with its compiled schemas.
type taskRT struct {
	*Task
	input, output *compiledSchema
}

func compileTask(t *Task) (*taskRT, error) {
	if t == nil {
		return nil, &BreadError{Code: CodeInvalidConfig, Message: "Config.Tasks holds a nil task"}
	}
	if err := ValidateName("task", t.Name); err != nil {
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

func taskNotFound(in *Instance, id, agentID string) *BreadError {
	names := slices.Sorted(maps.Keys(in.tasks))
	be := &BreadError{Code: CodeTaskNotFound, Message: "task " + quoteTruncated(id) + " not found", Context: map[string]any{"taskId": id, "available": names}}
	if agentID != "" {
		be.Message = "agent " + agentID + " references unknown task " + quoteTruncated(id)
		be.Context["agentId"] = agentID
	}
	return be
}

// Tasks returns the registered tasks, sorted by name.
func (in *Instance) Tasks() []*Task {
	out := make([]*Task, 0, len(in.tasks))
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
	if err := in.admit(); err != nil {
		return nil, err
	}
	defer in.inFlight.Add(-1)
	return in.executeTask(ctx, t, args, taskCall{agentID: opts.AgentID, runID: opts.RunID, sessionID: opts.SessionID})
}

// taskCall is the run a task executes in, if any.
type taskCall struct {
	agentID, runID, sessionID string
	providers                 ProviderRegistry // the calling agent's own registry
	emit                      func(Crumb)      // nil for a standalone run
	creds                     CredentialProvider
}

// taskTool compiles a task into the tool an agent calls.
func (in *Instance) taskTool(t *taskRT, agent *Agent) Tool {
	return Tool{
		Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
		Execute: func(ctx context.Context, raw json.RawMessage, tc ToolContext) (any, error) {
			return in.executeTask(ctx, t, raw, taskCall{
				agentID: tc.AgentID, runID: tc.RunID, sessionID: tc.SessionID,
				providers: agent.Providers, emit: tc.emit, creds: tc.Credentials,
			})
		},
	}
}

// executeTask runs the task-scope hooks around the model call, with OnError
// and retry.
func (in *Instance) executeTask(ctx context.Context, t *taskRT, args any, call taskCall) (any, error) {
	if t.checkInput != nil {
		if err := t.checkInput(args); err != nil {
			return nil, err
		}
	} else if err := t.input.validate("arguments of task "+t.Name, args); err != nil {
		return nil, err
	}
	if call.agentID == "" {
		call.agentID = "standalone"
	}
	if call.runID == "" {
		call.runID = newID()
	}
	if call.sessionID == "" {
		call.sessionID = call.runID
	}
	hc := HookContext{Scope: HookTask, AgentID: call.agentID, RunID: call.runID, SessionID: call.sessionID, TaskName: t.Name, Credentials: call.creds, Store: in.store}
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
		be := AsBreadError(err, CodeTaskError)
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
	model, err := ResolveModel(t.Model, t.Providers, call.providers, in.cfg.Providers)
	if err != nil {
		return nil, err
	}
	rawInput, err := asJSON(input)
	if err != nil {
		return nil, Errorf(CodeValidationError, "the input of task %s is not JSON: %w", t.Name, err)
	}
	id := newID()
	started := time.Now()
	audit, _ := in.store.(TaskRunStore)
	rec := TaskRunRecord{ID: id, TaskID: t.Name, Model: TaskModelInfo{Provider: t.Model.Provider, Model: t.Model.Model}, Input: rawInput, Status: TaskRunning, CreatedAt: started.UnixMilli()}
	if call.emit != nil {
		rec.AgentID, rec.SessionID, rec.RunID = call.agentID, call.sessionID, call.runID
	}
	if audit != nil {
		if err := audit.CreateTaskRun(ctx, rec); err != nil {
			in.log.Warn("bread: task run audit failed", "task", t.Name, "error", err)
			audit = nil
		}
	}
	base := CrumbBase{AgentID: call.agentID, RunID: call.runID, SessionID: call.sessionID}
	emit := func(c Crumb) {
		if call.emit != nil {
			call.emit(c)
		}
	}
	b := base
	b.Timestamp = started.UnixMilli()
	emit(&TaskStart{CrumbBase: b, TaskRunID: id, TaskID: t.Name, Model: rec.Model})

	out, usage, err := in.taskModelCall(ctx, t, model, rawInput)
	d := time.Since(started)
	upd := TaskRunUpdate{Status: TaskCompleted, DurationMs: max(d.Milliseconds(), 1), CompletedAt: NowMillis()}
	end := &TaskEnd{TaskRunID: id, TaskID: t.Name, Status: TaskCompleted, DurationMs: d.Milliseconds()}
	if usage != (Usage{}) {
		upd.Usage, end.Usage = &usage, &usage
	}
	if err != nil {
		be := AsBreadError(err, CodeTaskError)
		upd.Status, upd.Error = TaskFailed, be.Message
		end.Status, end.Error = TaskFailed, be.Message
	} else {
		upd.Output, _ = asJSON(out)
	}
	if audit != nil {
		if aerr := audit.FinishTaskRun(context.WithoutCancel(ctx), id, upd); aerr != nil {
			in.log.Warn("bread: task run audit failed", "task", t.Name, "error", aerr)
		}
	}
	end.CrumbBase = base
	end.Timestamp = NowMillis()
	emit(end)
	return out, err
}

func (in *Instance) taskModelCall(ctx context.Context, t *taskRT, model LanguageModel, input json.RawMessage) (any, Usage, error) {
	schema := t.OutputSchema
	if schema == nil {
		schema = json.RawMessage(`{}`)
	}
	pretty, _ := json.MarshalIndent(json.RawMessage(input), "", "  ")
	req := ModelRequest{
		System:          t.Instructions,
		Messages:        []Message{{Role: RoleUser, Parts: []Part{TextPart("Input:\n" + string(pretty))}}},
		Output:          &OutputSpec{Name: t.Name, Schema: schema},
		Settings:        t.Model.Settings,
		ProviderOptions: t.Model.ProviderOptions,
	}
	var text []byte
	var usage Usage
	for ev, err := range model.Stream(ctx, req) {
		if err != nil {
			return nil, usage, err
		}
		switch ev.Type {
		case EventTextDelta:
			text = append(text, ev.Delta...)
		case EventFinish:
			usage = usage.Add(ev.Usage)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, usage, err
	}
	out, _, err := decodeStructured(string(text), t.decodeOutput, t.output, "output of task "+t.Name)
	return out, usage, err
}
