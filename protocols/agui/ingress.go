package agui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/breadai/bread/core"
)

// maxParentHops bounds the walk from a delegated run's checkpoint up to the
// supervisor whose session is the thread.
const maxParentHops = 16

// serveRun serves POST Path, after the server's auth and Authorize granted
// ActionRun: parse, AuthorizeThread, then run (or resume) and stream.
func (p *Plugin) serveRun(w http.ResponseWriter, r *http.Request) {
	if p.closed.Load() || p.rt == nil {
		writeError(w, http.StatusServiceUnavailable, core.CodeNotStarted, "the AG-UI endpoint is not running")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.opts.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, core.CodeBodyTooLarge, "the body is larger than the route's limit")
			return
		}
		writeError(w, http.StatusBadRequest, core.CodeBadRequest, "the body could not be read")
		return
	}
	turn, err := ParseRunAgentInput(body)
	if err != nil {
		writeFailure(w, err)
		return
	}
	ctx := r.Context()
	if p.opts.AuthorizeThread != nil && !p.opts.AuthorizeThread(ctx, core.IdentityFrom(ctx), turn.ThreadID) {
		forbidden(w)
		return
	}
	var crumbs iter.Seq2[core.Crumb, error]
	clientTools := make([]string, len(turn.Client.Tools))
	for i, t := range turn.Client.Tools {
		clientTools[i] = t.Name
	}
	if len(turn.Resume) > 0 || len(turn.ToolResults) > 0 {
		// Every answer is checked (pending on this thread, well formed)
		// before any is resumed; an answer the engine then refuses (one
		// that does not match its tool's schema) ends the stream there.
		var ids []string
		var responses []any
		for i, entry := range turn.Resume {
			response, err := p.answer(ctx, turn.ThreadID, i, entry)
			if err != nil {
				writeFailure(w, err)
				return
			}
			ids, responses = append(ids, entry.InterruptID), append(responses, response)
		}
		answered, err := p.toolAnswers(ctx, turn.ThreadID, turn.ToolResults, len(ids) > 0)
		if err != nil {
			writeFailure(w, err)
			return
		}
		for _, a := range answered {
			ids, responses = append(ids, a.checkpointID), append(responses, a.content)
		}
		crumbs = p.resumeAll(ctx, ids, responses, turn.Client)
	} else {
		crumbs = p.rt.Run(ctx, p.opts.Agent, turn.Input, core.RunOptions{Session: core.SessionOptions{ID: turn.ThreadID}, Client: turn.Client})
	}
	m := NewThreadMapper(turn.ThreadID)
	m.SetClientTools(clientTools)
	if len(turn.Resume) > 0 || len(turn.ToolResults) > 0 {
		m.SetIDSpace(idSpace())
	}
	if state := p.startState(ctx, turn); state != nil {
		m.SetState(state)
	}
	if msgs := p.history(ctx, turn); msgs != nil {
		m.SetMessages(msgs)
	}
	m.SetThread(ThreadReader{
		State:    func() json.RawMessage { return p.threadState(ctx, turn.ThreadID) },
		Messages: func() []types.Message { return p.threadMessages(ctx, turn.ThreadID) },
	})
	p.stream(w, r, m, crumbs)
}

// answer checks that the interrupt a client answers is a checkpoint of its
// thread (the supervisor's session, for a delegated run) and turns the
// resume entry into the engine's response: the payload as it is, or, for a
// cancelled approval, a refusal. A cancelled human_input has no answer to
// give: VALIDATION_ERROR, and the checkpoint stays.
func (p *Plugin) answer(ctx context.Context, thread string, i int, entry types.ResumeEntry) (any, error) {
	id := entry.InterruptID
	at := `"resume[` + strconv.Itoa(i) + `]`
	notFound := &core.BreadError{Code: core.CodeCheckpointNotFound, Message: "interrupt " + quote(id) + " is not pending on thread " + quote(thread)}
	store := p.rt.Storage()
	cp, err := store.GetCheckpoint(ctx, id)
	if err != nil {
		if errors.Is(err, core.ErrCheckpointNotFound) || isCode(err, core.CodeCheckpointNotFound) {
			return nil, notFound
		}
		return nil, err
	}
	kind := cp.Kind
	owner := cp
	for hops := 0; owner.SessionID != thread; hops++ {
		if owner.Parent == nil || owner.Parent.CheckpointID == "" || hops == maxParentHops {
			return nil, notFound
		}
		owner, err = store.GetCheckpoint(ctx, owner.Parent.CheckpointID)
		if err != nil {
			return nil, notFound
		}
	}
	if entry.Status == types.ResumeStatusCancelled {
		if kind != core.HumanApproval {
			return nil, invalid("interrupt " + quote(id) + " waits for an answer (" + ReasonHumanInput + "); it cannot be cancelled, only resolved")
		}
		return map[string]any{"approved": false, "reason": "cancelled by the client"}, nil
	}
	if entry.Payload == nil {
		return nil, invalid(at + `.payload" is required to resolve an interrupt`)
	}
	raw, err := json.Marshal(entry.Payload)
	if err != nil {
		return nil, invalid(at + `.payload" is not JSON`)
	}
	return json.RawMessage(raw), nil
}

// resumeAll resumes the answered checkpoints one after the other as one
// stream: several humans (or client tools) asked in one turn are answered
// together, the last answer continuing the run with the client's input. A
// resume that fails ends the stream; the answers before it stay given.
func (p *Plugin) resumeAll(ctx context.Context, ids []string, responses []any, client core.ClientInput) iter.Seq2[core.Crumb, error] {
	return func(yield func(core.Crumb, error) bool) {
		for i, id := range ids {
			failed := false
			for c, err := range p.rt.ResumeWith(ctx, id, responses[i], client) {
				if !yield(c, err) {
					return
				}
				failed = failed || err != nil
			}
			if failed {
				return
			}
		}
	}
}

// stream answers with the run's AG-UI events as server-sent events, one
// `data:` frame per event. A run the engine refuses before it starts (the
// first crumb is an agent:error without a run, such as an answer that does
// not match its schema, or INSTANCE_STOPPING) is a plain JSON error instead:
// nothing ran and nothing was consumed. Leaving the loop (the client went
// away) cancels the run.
func (p *Plugin) stream(w http.ResponseWriter, r *http.Request, m *Mapper, crumbs iter.Seq2[core.Crumb, error]) {
	thread := m.thread
	next, stop := iter.Pull2(crumbs)
	defer stop()
	first, ferr, ok := next()
	if ok && ferr != nil {
		if ae, isErr := first.(*core.AgentError); first == nil || (isErr && ae.RunID == "") {
			writeFailure(w, ferr)
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, rc: http.NewResponseController(w), last: time.Now()}
	defer s.keepAlive(p.heartbeat())()
	c, err, more := first, ferr, ok
	terminal := false
	for more {
		if c != nil {
			switch c.(type) {
			case *core.AgentError, *core.AgentRunEnd:
				terminal = true
			}
			if !s.send(m.Map(c)) {
				p.log.Debug("agui: stream client went away; cancelling its run", "thread", thread, "error", context.Cause(r.Context()))
				return
			}
		}
		if err != nil {
			if c == nil && !terminal {
				ce := core.Sanitize(err)
				code := ce.Code
				s.send([]events.Event{&events.RunErrorEvent{BaseEvent: base(events.EventTypeRunError, core.NowMillis()), Code: &code, Message: ce.Message}})
			}
			return
		}
		c, err, more = next()
	}
	s.send(m.End(core.NowMillis()))
}

func (p *Plugin) heartbeat() time.Duration {
	if p.opts.Heartbeat == 0 {
		return DefaultHeartbeat
	}
	return p.opts.Heartbeat
}

// sse writes events as server-sent events, flushing each batch. The
// stream's goroutine sends; the keep-alive goroutine pings in the silences;
// mu orders their writes.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu   sync.Mutex
	buf  []byte
	dead bool
	last time.Time // the last write
}

// keepAlive starts the goroutine that writes a `: ping` comment once the
// stream has been quiet for two thirds of every, checking every third, so
// no silence lasts longer than every. The returned func stops it and waits;
// call it before the handler returns.
func (s *sse) keepAlive(every time.Duration) (stop func()) {
	if every <= 0 {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every / 3)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				s.ping(every * 2 / 3)
			}
		}
	}()
	return func() { close(quit); <-done }
}

func (s *sse) ping(quiet time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead || time.Since(s.last) < quiet {
		return
	}
	s.write([]byte(": ping\n\n"))
}

// write writes and flushes b; the caller holds mu.
func (s *sse) write(b []byte) bool {
	if _, err := s.w.Write(b); err != nil {
		s.dead = true
		return false
	}
	if err := s.rc.Flush(); err != nil {
		s.dead = true
		return false
	}
	s.last = time.Now()
	return true
}

func (s *sse) send(evs []events.Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return false
	}
	if len(evs) == 0 {
		return true
	}
	s.buf = s.buf[:0]
	for _, e := range evs {
		b, err := json.Marshal(e)
		if err != nil {
			continue // an unencodable payload must not end the stream
		}
		s.buf = append(s.buf, "data: "...)
		s.buf = append(s.buf, b...)
		s.buf = append(s.buf, '\n', '\n')
	}
	return s.write(s.buf)
}

// writeFailure answers a refused request with {"error":{code,message}} and
// the status its code means.
func writeFailure(w http.ResponseWriter, err error) {
	ce := core.Sanitize(err)
	writeError(w, statusOf(ce.Code), ce.Code, ce.Message)
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]core.ClientError{"error": {Code: code, Message: message}})
}

// forbiddenBody is the server's 403 body (server.ForbiddenBody), byte for
// byte the seed's: a refused thread answers as the server's own guards do,
// telling nothing of what is behind it.
const forbiddenBody = `{"error":"Forbidden"}`

// forbidden answers 403 with forbiddenBody.
func forbidden(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(forbiddenBody))
}

func statusOf(code string) int {
	switch {
	case code == core.CodeBadRequest || code == core.CodeValidationError:
		return http.StatusBadRequest
	case code == core.CodeForbidden:
		return http.StatusForbidden
	case code == core.CodeBodyTooLarge:
		return http.StatusRequestEntityTooLarge
	case code == core.CodeInstanceStopping || code == core.CodeNotStarted:
		return http.StatusServiceUnavailable
	case code == core.CodeConcurrencyLimit:
		return http.StatusTooManyRequests
	case code == core.CodeCheckpointClaimed:
		return http.StatusConflict
	case strings.HasSuffix(code, "_NOT_FOUND"):
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

func isCode(err error, code string) bool {
	var be *core.BreadError
	return errors.As(err, &be) && be.Code == code
}

// idSpace is a short random id space for a continuing stream's messages.
func idSpace() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func quote(s string) string {
	b, _ := json.Marshal(truncate(s, 64))
	return string(b)
}
