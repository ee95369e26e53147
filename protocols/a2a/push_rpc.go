package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
)

// OnGetTaskPushConfig and the other push methods answer
// push-not-supported (-32003) without Options.Push.
func (h *handler) OnGetTaskPushConfig(ctx context.Context, q *a2a.GetTaskPushConfigParams) (*a2a.TaskPushConfig, error) {
	if h.p.push == nil {
		return nil, a2a.ErrPushNotificationNotSupported
	}
	if q == nil {
		return nil, invalidParams("params are required")
	}
	if _, err := h.record(ctx, q.TaskID); err != nil {
		return nil, err
	}
	all, err := h.p.push.store.list(ctx, q.TaskID)
	if err != nil {
		return nil, h.internal(ctx, "reading push notification configs", err)
	}
	var c *a2a.PushConfig
	for _, one := range all {
		if one.ID == q.ConfigID || (q.ConfigID == "" && c == nil) {
			c = one
		}
	}
	if c == nil {
		return nil, invalidParams("task " + quote(string(q.TaskID)) + " has no push notification config " + quote(q.ConfigID))
	}
	return &a2a.TaskPushConfig{TaskID: q.TaskID, Config: *c}, nil
}

func (h *handler) OnListTaskPushConfig(ctx context.Context, q *a2a.ListTaskPushConfigParams) ([]*a2a.TaskPushConfig, error) {
	if h.p.push == nil {
		return nil, a2a.ErrPushNotificationNotSupported
	}
	if q == nil {
		return nil, invalidParams("params are required")
	}
	if _, err := h.record(ctx, q.TaskID); err != nil {
		return nil, err
	}
	all, err := h.p.push.store.list(ctx, q.TaskID)
	if err != nil {
		return nil, h.internal(ctx, "reading push notification configs", err)
	}
	out := []*a2a.TaskPushConfig{}
	for _, c := range all {
		out = append(out, &a2a.TaskPushConfig{TaskID: q.TaskID, Config: *c})
	}
	return out, nil
}

func (h *handler) OnSetTaskPushConfig(ctx context.Context, q *a2a.TaskPushConfig) (*a2a.TaskPushConfig, error) {
	if h.p.push == nil {
		return nil, a2a.ErrPushNotificationNotSupported
	}
	if q == nil {
		return nil, invalidParams("params are required")
	}
	rec, err := h.record(ctx, q.TaskID)
	if err != nil {
		return nil, err
	}
	if rec.Status.Final() {
		return nil, fmt.Errorf("task %s is %s: no update will follow: %w", quote(rec.ID), stateOf(rec.Status), a2a.ErrUnsupportedOperation)
	}
	c, err := h.pushConfig(ctx, &q.Config)
	if err != nil {
		return nil, err
	}
	saved, err := h.p.push.store.save(ctx, q.TaskID, rec.SessionID, *c)
	if err != nil {
		if errors.Is(err, a2a.ErrInvalidParams) {
			return nil, err
		}
		return nil, h.internal(ctx, "keeping a push notification config", err)
	}
	h.p.watch(taskInfo(rec.ID, rec.SessionID))
	return &a2a.TaskPushConfig{TaskID: q.TaskID, Config: *saved}, nil
}

func (h *handler) OnDeleteTaskPushConfig(ctx context.Context, q *a2a.DeleteTaskPushConfigParams) error {
	if h.p.push == nil {
		return a2a.ErrPushNotificationNotSupported
	}
	if q == nil {
		return invalidParams("params are required")
	}
	if _, err := h.record(ctx, q.TaskID); err != nil {
		return err
	}
	found, err := h.p.push.store.remove(ctx, q.TaskID, q.ConfigID)
	if err != nil {
		return h.internal(ctx, "deleting a push notification config", err)
	}
	if !found {
		return invalidParams("task " + quote(string(q.TaskID)) + " has no push notification config " + quote(q.ConfigID))
	}
	return nil
}

// pushConfig checks a push config a client gives: a receiver the guard
// accepts and an authentication bread can send.
func (h *handler) pushConfig(ctx context.Context, c *a2a.PushConfig) (*a2a.PushConfig, error) {
	if h.p.push == nil {
		return nil, a2a.ErrPushNotificationNotSupported
	}
	u, err := h.p.push.send.Check(ctx, c.URL)
	if err != nil {
		return nil, invalidParams("pushNotificationConfig.url: " + core.Sanitize(err).Message)
	}
	if !pushAuthSupported(c) {
		return nil, invalidParams("pushNotificationConfig.authentication: bread authenticates with Bearer or Basic credentials only")
	}
	out := *c
	out.URL = u
	return &out, nil
}

// sendPush is the checked configuration.pushNotificationConfig of a
// message, nil when it has none.
func (h *handler) sendPush(ctx context.Context, params *a2a.MessageSendParams) (*a2a.PushConfig, error) {
	if params == nil || params.Config == nil || params.Config.PushConfig == nil {
		return nil, nil
	}
	return h.pushConfig(ctx, params.Config.PushConfig)
}

// registerPush keeps c (if any) for the task a message started or resumed
// and watches the task when it has configs: a resumed task's configs,
// set before, get its new states.
// resumedAt is the log position an answer's continuation starts at (0
// for a new task): what the log holds below it is past, so the watcher
// does not take the input request it ends on, before the continuation is
// logged, for the task's current state.
func (h *handler) registerPush(info a2a.TaskInfo, c *a2a.PushConfig, resumedAt int64) {
	if h.p.push == nil {
		return
	}
	resumed := resumedAt > 0
	if resumed {
		h.p.push.resumedAt(info.TaskID, resumedAt)
	}
	if c != nil {
		if _, err := h.p.push.store.save(h.p.push.ctx, info.TaskID, string(info.ContextID), *c); err != nil {
			h.p.log.Warn("a2a: a message's push notification config was not kept", "task", string(info.TaskID), "error", err)
		}
	}
	if cfgs, _ := h.p.push.store.list(h.p.push.ctx, info.TaskID); !resumed && len(cfgs) > 0 {
		// A new run starts working: the crumbs it logs carry its next
		// state, not this one (a resumed run's log says working itself,
		// after the input request a watcher may not have queued yet).
		now := time.Now().UTC()
		h.p.push.enqueue(&a2a.Task{ID: info.TaskID, ContextID: info.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now}})
	}
	h.p.watch(info)
}

// servePeeked reads a v0.3 request's method before a2a-go's handler does,
// for the two answers it would get wrong. tasks/pushNotificationConfig/delete:
// a2a-go v0.3.3 writes nothing for its nil result, so a client reads an
// empty body; this writes {"result": null} with the request's id.
// agent/getAuthenticatedExtendedCard from a caller without an identity:
// the spec's answer is HTTP 401, which a2a-go cannot give; this writes it,
// with a -32000 error naming UNAUTHENTICATED. Any other request goes to
// next with its body intact.
func (p *Plugin) servePeeked(w http.ResponseWriter, r *http.Request, next func(*http.Request)) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "the request body could not be read", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 {
		next(r)
		return
	}
	switch {
	case req.Method == "agent/getAuthenticatedExtendedCard" && p.opts.ExtendedCard && core.IdentityFrom(r.Context()) == nil:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("WWW-Authenticate", "Bearer")
		w.WriteHeader(http.StatusUnauthorized)
		detail, _ := json.Marshal(strings.TrimSuffix(errUnauthenticated.Error(), ": "+a2a.ErrServerError.Error()))
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"Server error","data":{"error":%s}}}`+"\n", req.ID, detail)
	case req.Method == "tasks/pushNotificationConfig/delete" && p.push != nil:
		rw := &wroteWriter{ResponseWriter: w}
		p.rpc.ServeHTTP(rw, r)
		if !rw.wrote {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":null}`+"\n", req.ID)
		}
	default:
		next(r)
	}
}

// wroteWriter records whether anything was written.
type wroteWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *wroteWriter) WriteHeader(code int) { w.wrote = true; w.ResponseWriter.WriteHeader(code) }

func (w *wroteWriter) Write(b []byte) (int, error) { w.wrote = true; return w.ResponseWriter.Write(b) }

func (w *wroteWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
