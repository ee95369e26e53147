package a2a

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/breadai/bread/core"
)

// handler implements a2asrv.RequestHandler over the plugin's Runtime; a2a-go's
// JSON-RPC handler decodes requests, calls it and encodes its answers.
type handler struct{ p *Plugin }

var _ a2asrv.RequestHandler = (*handler)(nil)

// maxCheckpointHops bounds the walk from a supervisor's checkpoint down to
// the delegated run that waits for input.
const maxCheckpointHops = 16

// record reads a task's run record: an unknown id, a run of another agent
// or a pipeline's run is task-not-found.
func (h *handler) record(ctx context.Context, id a2a.TaskID) (core.RunRecord, error) {
	if id == "" {
		return core.RunRecord{}, invalidParams("the task id is required")
	}
	rec, err := h.p.runs.GetRun(ctx, string(id))
	if err != nil {
		if errors.Is(err, core.ErrRunNotFound) || isCode(err, core.CodeRunNotFound) {
			return rec, fmt.Errorf("task %s: %w", quote(string(id)), a2a.ErrTaskNotFound)
		}
		return rec, h.internal(ctx, "reading a task's run record", err)
	}
	if rec.AgentID != h.p.opts.Agent || rec.PipelineID != "" || !h.allowed(ctx, rec) {
		return rec, fmt.Errorf("task %s: %w", quote(string(id)), a2a.ErrTaskNotFound)
	}
	return rec, nil
}

// allowed applies Options.AuthorizeTask, or the default: the starter of the
// run, when the request carries an identity.
func (h *handler) allowed(ctx context.Context, rec core.RunRecord) bool {
	id := core.IdentityFrom(ctx)
	if f := h.p.opts.AuthorizeTask; f != nil {
		return f(ctx, id, rec.ID)
	}
	return id == nil || (rec.StartedBy != "" && rec.StartedBy == core.OwnerKey(id))
}

// internal logs err and answers -32603 without its details.
func (h *handler) internal(ctx context.Context, doing string, err error) error {
	h.p.log.ErrorContext(ctx, "a2a: "+doing+" failed", "error", err)
	return a2a.ErrInternalError
}

// refuse is rpcError, logging what it hides.
func (h *handler) refuse(ctx context.Context, err error) error {
	out := rpcError(err)
	if errors.Is(out, a2a.ErrInternalError) && !errors.Is(err, a2a.ErrInternalError) {
		h.p.log.ErrorContext(ctx, "a2a: a request failed", "error", err)
	}
	return out
}

// stateOf is the A2A state of a run status.
func stateOf(s core.RunStatus) a2a.TaskState {
	switch s {
	case core.RunRunning:
		return a2a.TaskStateWorking
	case core.RunSuspended:
		return a2a.TaskStateInputRequired
	case core.RunCompleted:
		return a2a.TaskStateCompleted
	case core.RunCancelled:
		return a2a.TaskStateCanceled
	case core.RunFailed, core.RunLost:
		return a2a.TaskStateFailed
	}
	return a2a.TaskStateUnknown
}

// snapshot is a task as the store knows it: the state of its run record and,
// when the store keeps a crumb log, the artifacts and status message the
// logged crumbs map to.
func (h *handler) snapshot(ctx context.Context, rec core.RunRecord) *a2a.Task {
	t, _ := h.replay(ctx, rec)
	state := stateOf(rec.Status)
	if t.Status.State != state {
		t.Status = a2a.TaskStatus{State: state}
		switch {
		case state == a2a.TaskStateInputRequired:
			// The log did not end on the input request: it is a delegated
			// run's (logged under that run), or not logged yet. The
			// checkpoint the answer resumes says what it asks.
			h.askFromCheckpoint(ctx, rec, t)
		case rec.ErrorCode != "" && (state == a2a.TaskStateFailed || state == a2a.TaskStateCanceled):
			t.Status.Message = errorMessage(rec.ErrorCode, "the run ended with "+rec.ErrorCode)
		}
	}
	if rec.UpdatedAt > 0 {
		ts := time.UnixMilli(rec.UpdatedAt).UTC()
		t.Status.Timestamp = &ts
	}
	return t
}

// replay is the task a task's logged crumbs map to, when the store keeps a
// crumb log, and the mapper that built it: a resumed run's events go on
// from there, so its text appends to the text before the suspension and
// its files are numbered after the earlier ones. The plugin's task cache
// reads only what was logged since its last read of the task.
func (h *handler) replay(ctx context.Context, rec core.RunRecord) (*a2a.Task, *mapper) {
	return h.p.tasks.replayed(ctx, h, rec)
}

// readLog applies the entries of rec's crumb log after seq after to t
// through m and returns the highest seq it read. A log that cannot be read
// leaves t as far as it got (the task answers with its state).
func (h *handler) readLog(ctx context.Context, rec core.RunRecord, after int64, t *a2a.Task, m *mapper) int64 {
	store := h.p.rt.Storage()
	if !store.Has(core.StoreCrumbLog) {
		return after
	}
	for {
		entries, err := store.GetCrumbs(ctx, rec.ID, after, replayPage)
		if err != nil {
			h.p.log.WarnContext(ctx, "a2a: reading a task's crumb log failed; answering with what was read", "taskId", rec.ID, "error", err)
			return after
		}
		for i, e := range entries {
			after = max(after, e.Seq)
			if e.Crumb == nil {
				continue
			}
			last := i == len(entries)-1 && len(entries) < replayPage
			evs, _ := m.events(e.Crumb, last && rec.Status == core.RunSuspended)
			for _, ev := range evs {
				apply(t, ev)
			}
		}
		if len(entries) < replayPage {
			return after
		}
	}
}

// askFromCheckpoint sets t's status to the input request of the checkpoint
// a suspended task's answer resumes, as its stream ended with it. A
// checkpoint that cannot be read leaves the status without a message.
func (h *handler) askFromCheckpoint(ctx context.Context, rec core.RunRecord, t *a2a.Task) {
	id, err := h.waiting(ctx, rec)
	if err != nil {
		return
	}
	cp, err := h.p.rt.Storage().GetCheckpoint(ctx, id)
	if err != nil {
		return
	}
	asked := &core.HumanRequired{CrumbBase: core.CrumbBase{AgentID: cp.AgentID, RunID: cp.RunID, SessionID: cp.SessionID},
		CheckpointID: cp.ID, ToolName: cp.ToolName, Schema: cp.Schema, Prompt: cp.Prompt, Kind: cp.Kind}
	evs, _ := h.p.newMapper(taskInfo(rec.ID, rec.SessionID)).events(asked, true)
	for _, ev := range evs {
		apply(t, ev)
	}
}

// OnGetTask implements tasks/get: the task's snapshot from the store, so
// any replica answers. historyLength is ignored.
func (h *handler) OnGetTask(ctx context.Context, q *a2a.TaskQueryParams) (*a2a.Task, error) {
	if q == nil {
		return nil, invalidParams("params are required")
	}
	rec, err := h.record(ctx, q.ID)
	if err != nil {
		return nil, err
	}
	return h.snapshot(ctx, rec), nil
}

// OnCancelTask implements tasks/cancel: a working task's run is cancelled
// wherever it runs (through Options.Canceller) and the task answers
// canceled at once; its stream's final status says so once the run
// unwinds. A task waiting for input is ended through the store, from any
// replica, when the runtime can (engine.Instance.CancelSuspended). A
// finished task is not cancelable.
func (h *handler) OnCancelTask(ctx context.Context, params *a2a.TaskIDParams) (*a2a.Task, error) {
	if params == nil {
		return nil, invalidParams("params are required")
	}
	rec, err := h.record(ctx, params.ID)
	if err != nil {
		return nil, err
	}
	switch {
	case rec.Status.Final():
		return nil, fmt.Errorf("task %s is %s: %w", quote(rec.ID), stateOf(rec.Status), a2a.ErrTaskNotCancelable)
	case rec.Status == core.RunSuspended:
		sc, ok := h.p.rt.(suspensionCanceller)
		if !ok {
			return nil, fmt.Errorf("task %s waits for input; answer it (an approval with {\"approved\": false}) instead: %w", quote(rec.ID), a2a.ErrTaskNotCancelable)
		}
		found, err := sc.CancelSuspended(ctx, rec.ID)
		if err != nil {
			be := core.AsBreadError(err, core.CodeInternalError)
			if be.Code == core.CodeInternalError || be.Code == core.CodeStoreError {
				return nil, h.internal(ctx, "cancelling a task that waits for input", err)
			}
			return nil, fmt.Errorf("task %s: %s: %w", quote(rec.ID), be.Message, a2a.ErrTaskNotCancelable)
		}
		if !found {
			return nil, fmt.Errorf("task %s no longer waits for input: %w", quote(rec.ID), a2a.ErrTaskNotCancelable)
		}
		rec, err = h.record(ctx, params.ID)
		if err != nil {
			return nil, err
		}
		return h.snapshot(ctx, rec), nil
	}
	var found bool
	if c := h.p.opts.Canceller; c != nil {
		found, err = c.Cancel(ctx, rec.ID)
		if err != nil {
			return nil, h.internal(ctx, "cancelling a task's run", err)
		}
	} else {
		found = h.p.rt.Cancel(rec.ID)
	}
	if !found {
		return nil, fmt.Errorf("task %s is not running on any replica this one can reach: %w", quote(rec.ID), a2a.ErrTaskNotCancelable)
	}
	t := h.snapshot(ctx, rec)
	now := time.Now().UTC()
	t.Status = a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: &now}
	return t, nil
}

// OnSendMessage implements message/send: the run (or the resumption of an
// input-required task) runs to its end, or to its next input-required
// state, and the task comes back with its artifacts. With
// configuration.blocking false the task comes back as soon as the run
// started, and the run goes on without the request.
func (h *handler) OnSendMessage(ctx context.Context, params *a2a.MessageSendParams) (a2a.SendMessageResult, error) {
	blocking := params == nil || params.Config == nil || params.Config.Blocking == nil || *params.Config.Blocking
	if !blocking {
		ctx = context.WithoutCancel(ctx)
	}
	push, err := h.sendPush(ctx, params)
	if err != nil {
		return nil, err
	}
	s, err := h.start(ctx, params)
	if err != nil {
		return nil, err
	}
	h.registerPush(s.info, push, s.resumedAt())
	t := s.task()
	if !blocking {
		go func() {
			defer s.stop()
			for _, _, ok := s.next(); ok; _, _, ok = s.next() {
			}
		}()
		return t, nil
	}
	for ev := range s.events(ctx) {
		apply(t, ev)
	}
	return t, nil
}

// OnSendMessageStream implements message/stream: the initial task
// (working), then artifact updates and status updates as the run goes, and
// a final status (completed, failed, canceled or input-required). A client
// that goes away cancels the run, as on bread's own run route.
func (h *handler) OnSendMessageStream(ctx context.Context, params *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		push, err := h.sendPush(ctx, params)
		if err != nil {
			yield(nil, err)
			return
		}
		s, err := h.start(ctx, params)
		if err != nil {
			yield(nil, err)
			return
		}
		h.registerPush(s.info, push, s.resumedAt())
		if !yield(s.task(), nil) {
			s.stop()
			return
		}
		for ev := range s.events(ctx) {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// OnResubscribeToTask implements tasks/resubscribe: the task's snapshot
// state, then its events from the crumb log and the live bus (the passive
// run stream's catch-up), until its final status. A finished task is
// unsupported-operation (-32004): read it with tasks/get.
func (h *handler) OnResubscribeToTask(ctx context.Context, params *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if params == nil {
			yield(nil, invalidParams("params are required"))
			return
		}
		rec, err := h.record(ctx, params.ID)
		if err != nil {
			yield(nil, err)
			return
		}
		if rec.Status.Final() {
			yield(nil, fmt.Errorf("task %s is %s; read it instead: %w", quote(rec.ID), stateOf(rec.Status), a2a.ErrUnsupportedOperation))
			return
		}
		info := taskInfo(rec.ID, rec.SessionID)
		now := time.Now().UTC()
		if !yield(&a2a.Task{ID: info.TaskID, ContextID: info.ContextID, Status: a2a.TaskStatus{State: stateOf(rec.Status), Timestamp: &now}}, nil) {
			return
		}
		h.p.follow(ctx, rec.ID, 0, h.p.newMapper(info), func(ev a2a.Event, _ int64) bool { return yield(ev, nil) })
	}
}

// started is a run (or resumption) that passed the engine's checks: its
// first crumb is read, so its task id is known.
type started struct {
	h     *handler
	info  a2a.TaskInfo
	msg   *a2a.Message
	next  func() (core.Crumb, error, bool)
	stop  func()
	first core.Crumb
	ferr  error
	// so far and m are, for an answer that resumes a task, the task as its
	// log built it and the mapper that built it; nil for a new task.
	soFar *a2a.Task
	m     *mapper
}

// resumedAt is, for an answer that resumed a task, the log position its
// continuation starts at (its first crumb's seq; 1 when unknown, as for a
// continuation that starts in a delegated run, numbered in that run's
// log); 0 for a new task.
func (s *started) resumedAt() int64 {
	if s.soFar == nil {
		return 0
	}
	if s.first != nil && s.first.Base().RunID == string(s.info.TaskID) && s.first.Base().Seq > 0 {
		return s.first.Base().Seq
	}
	return 1
}

// start runs the message: a new task on the message's context (a new
// context when it names none), or, when it names a task, the answer to
// that task's input request. A refusal before the run starts (bad parts, an
// answer that does not match, a busy session) is a JSON-RPC error.
func (h *handler) start(ctx context.Context, params *a2a.MessageSendParams) (*started, error) {
	if params == nil || params.Message == nil {
		return nil, invalidParams("params.message is required")
	}
	msg := params.Message
	input, err := h.p.inputOf(ctx, msg)
	if err != nil {
		return nil, h.refuse(ctx, err)
	}
	var crumbs iter.Seq2[core.Crumb, error]
	var resumed *a2a.TaskInfo // the task an answer resumes
	var soFar *a2a.Task
	var m *mapper
	if msg.TaskID != "" {
		rec, err := h.record(ctx, msg.TaskID)
		if err != nil {
			return nil, err
		}
		if msg.ContextID != "" && msg.ContextID != rec.SessionID {
			return nil, invalidParams(fmt.Sprintf("task %s belongs to context %s, not %s", quote(rec.ID), quote(rec.SessionID), quote(msg.ContextID)))
		}
		switch {
		case rec.Status == core.RunRunning:
			return nil, fmt.Errorf("TASK_BUSY: task %s is working and takes no input until it asks for some (input-required): %w", quote(rec.ID), a2a.ErrServerError)
		case rec.Status != core.RunSuspended:
			return nil, invalidParams(fmt.Sprintf("task %s is %s; send a message without taskId on its contextId to go on", quote(rec.ID), stateOf(rec.Status)))
		}
		cp, err := h.waiting(ctx, rec)
		if err != nil {
			return nil, h.refuse(ctx, err)
		}
		soFar, m = h.replay(ctx, rec)
		crumbs = h.p.rt.Resume(ctx, cp, input)
		// The continuation may start in a delegated run (its checkpoint is
		// the one answered); the task stays the supervisor's.
		info := taskInfo(rec.ID, rec.SessionID)
		resumed = &info
	} else {
		session := msg.ContextID
		if session == "" {
			session = a2a.NewContextID()
		}
		crumbs = h.p.rt.Run(ctx, h.p.opts.Agent, input, core.RunOptions{Session: core.SessionOptions{ID: session}})
	}
	next, stop := iter.Pull2(crumbs)
	c, err, ok := next()
	if !ok {
		stop()
		return nil, h.internal(ctx, "starting a run", errors.New("the run ended before its first crumb"))
	}
	if err != nil {
		if ae, isErr := c.(*core.AgentError); c == nil || (isErr && ae.RunID == "") {
			stop()
			return nil, h.refuse(ctx, err)
		}
	}
	b := c.Base()
	s := &started{h: h, info: taskInfo(b.RunID, b.SessionID), next: next, stop: stop, first: c, ferr: err, soFar: soFar, m: m}
	if resumed != nil {
		s.info = *resumed
	}
	sent := *msg
	sent.TaskID, sent.ContextID = s.info.TaskID, s.info.ContextID
	s.msg = &sent
	return s, nil
}

// waiting is the checkpoint a suspended task's answer resumes: the run's
// own, or, for a supervisor waiting on one delegated run, that run's.
func (h *handler) waiting(ctx context.Context, rec core.RunRecord) (string, error) {
	id := rec.CheckpointID
	if id == "" {
		return "", &core.BreadError{Code: core.CodeCheckpointNotFound, Message: "task " + quote(rec.ID) + " waits for input, but its checkpoint is not recorded"}
	}
	store := h.p.rt.Storage()
	for range maxCheckpointHops {
		cp, err := store.GetCheckpoint(ctx, id)
		if err != nil {
			if errors.Is(err, core.ErrCheckpointNotFound) || isCode(err, core.CodeCheckpointNotFound) {
				return "", &core.BreadError{Code: core.CodeCheckpointNotFound, Message: "task " + quote(rec.ID) + " no longer waits for input (answered already)"}
			}
			return "", err
		}
		switch len(cp.Pending) {
		case 0:
			return id, nil
		case 1:
			id = cp.Pending[0].ChildCheckpointID
		default:
			return "", &core.BreadError{Code: core.CodeValidationError, Message: "task " + quote(rec.ID) + " waits on " + strconv.Itoa(len(cp.Pending)) + " delegated runs at once; answer them through bread's resume route"}
		}
	}
	return "", &core.BreadError{Code: core.CodeValidationError, Message: "task " + quote(rec.ID) + " waits through too many delegations"}
}

// task is the initial task of a started run: working, with the message as
// its history; an answer's task keeps the artifacts it had before it asked.
func (s *started) task() *a2a.Task {
	now := time.Now().UTC()
	t := &a2a.Task{ID: s.info.TaskID, ContextID: s.info.ContextID}
	if s.soFar != nil {
		t.Artifacts = s.soFar.Artifacts
	}
	t.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now}
	t.History = []*a2a.Message{s.msg}
	return t
}

// events maps the run's crumbs to events up to a final status, then reads
// the rest of the run without mapping it (leaving early would cancel it).
// The final status goes out once the run's stream has ended, when the
// engine has stored the run's crumbs: a client may act on it at once (answer
// an input request on another replica) and find the log complete. Stopping
// the range cancels the run.
func (s *started) events(ctx context.Context) iter.Seq[a2a.Event] {
	return func(yield func(a2a.Event) bool) {
		defer s.stop()
		m := s.m
		if m == nil {
			m = s.h.p.newMapper(s.info)
		}
		c, err, more := s.first, s.ferr, true
		final := false
		var held a2a.Event
		for more && !final {
			if c != nil {
				var evs []a2a.Event
				evs, final = m.events(c, true)
				if final {
					held, evs = evs[len(evs)-1], evs[:len(evs)-1]
				}
				for _, ev := range evs {
					if !yield(ev) {
						return
					}
				}
			}
			if err != nil && !final {
				ce := core.Sanitize(err)
				st := m.status(a2a.TaskStateFailed, errorMessage(ce.Code, ce.Message))
				if ce.Code == core.CodeRunCancelled {
					st.Status.State = a2a.TaskStateCanceled
				}
				st.Final = true
				yield(st)
				return
			}
			if !final {
				c, err, more = s.next()
			}
		}
		if final {
			for _, _, ok := s.next(); ok; _, _, ok = s.next() {
			}
			yield(held)
			return
		}
		// The run's stream ended without a terminal crumb: its record says
		// where it stands.
		rec, rerr := s.h.p.runs.GetRun(context.WithoutCancel(ctx), string(s.info.TaskID))
		if rerr != nil {
			return
		}
		st := m.status(stateOf(rec.Status), nil)
		st.Final = true
		yield(st)
	}
}

func isCode(err error, code string) bool {
	var be *core.BreadError
	return errors.As(err, &be) && be.Code == code
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strconv.Quote(s)
}

// suspensionCanceller ends a run that waits for a human
// (*engine.Instance has it).
type suspensionCanceller interface {
	CancelSuspended(ctx context.Context, runID string) (bool, error)
}
