package a2a

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
)

// The spec versions a mount speaks (Options.SpecVersion).
const (
	SpecV03 = "0.3"
	SpecV1  = "1.0"
)

// v1 serves the spec v1.0 JSON-RPC binding: PascalCase methods, the
// StreamResponse/SendMessageResponse wrappers, TASK_STATE_* and ROLE_*
// enums, parts told apart by which member is present, errors with a
// google.rpc.ErrorInfo detail. It translates to and from a2a-go's v0.3
// types and calls the same handler as the v0.3 mount, so both versions
// behave alike.
type v1 struct{ h *handler }

type v1Request struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	ID      any             `json:"id"`
}

// v1Error is an error with its JSON-RPC code and ErrorInfo reason.
type v1Error struct {
	code    int
	message string
	reason  string
	detail  string
	// http overrides the HTTP status the HTTP+JSON binding answers with.
	http int
}

func (h v1) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var req v1Request
	dec := json.NewDecoder(r.Body)
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		writeV1(w, nil, nil, v1Err(fmt.Errorf("%w: %w", a2a.ErrParseError, err)))
		return
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		writeV1(w, req.ID, nil, v1Err(a2a.ErrInvalidRequest))
		return
	}
	if e := v1VersionError(r); e != nil {
		writeV1(w, req.ID, nil, e)
		return
	}
	streaming, known := v1Methods[req.Method]
	switch {
	case !known:
		writeV1(w, req.ID, nil, v1Err(fmt.Errorf("%s: %w", quote(req.Method), a2a.ErrMethodNotFound)))
	case streaming:
		events, err := h.stream(ctx, req.Method, req.Params)
		if err != nil {
			writeV1(w, req.ID, nil, v1Err(err))
			return
		}
		writeSSE(ctx, h.h.p.log, w, events, func(err error) { writeV1(w, req.ID, nil, v1Err(err)) },
			func(ev a2a.Event, err error) (string, any) {
				if err != nil {
					return "", v1Envelope(req.ID, nil, v1Err(err))
				}
				return "", v1Envelope(req.ID, v1Event(ev), nil)
			})
	default:
		res, err := h.call(ctx, req.Method, req.Params)
		if err != nil {
			writeV1(w, req.ID, nil, v1Err(err))
			return
		}
		writeV1(w, req.ID, res, nil)
	}
}

// v1VersionError refuses an A2A-Version header other than 1.x; a request
// without one is served as 1.0.
func v1VersionError(r *http.Request) *v1Error {
	v := r.Header.Get("A2A-Version")
	if v == "" || v == "1" || strings.HasPrefix(v, "1.") {
		return nil
	}
	return &v1Error{code: -32009, message: "Version not supported", reason: "VERSION_NOT_SUPPORTED", detail: "this endpoint speaks A2A 1.0, not " + quote(v)}
}

// v1Methods are the v1.0 operations by name, true for those that answer
// with an event stream. The JSON-RPC and HTTP+JSON bindings both call them
// (call and stream), so a task reads the same on either.
var v1Methods = map[string]bool{
	"SendMessage": false, "GetTask": false, "ListTasks": false, "CancelTask": false,
	"CreateTaskPushNotificationConfig": false, "GetTaskPushNotificationConfig": false,
	"ListTaskPushNotificationConfigs": false, "DeleteTaskPushNotificationConfig": false,
	"GetExtendedAgentCard": false,
	"SendStreamingMessage": true, "SubscribeToTask": true,
}

// call runs a unary v1.0 operation on its request message (params) and
// answers its response message, in the v1.0 shapes.
func (h v1) call(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "SendMessage":
		p, err := decodeV1Send(params)
		if err != nil {
			return nil, err
		}
		res, err := h.h.OnSendMessage(ctx, p)
		if err != nil {
			return nil, err
		}
		return v1SendResult(res), nil
	case "GetTask":
		var p struct {
			ID            string `json:"id"`
			HistoryLength *int   `json:"historyLength"`
		}
		if err := json.Unmarshal(orEmpty(params), &p); err != nil {
			return nil, fmt.Errorf("params: %w", a2a.ErrInvalidParams)
		}
		t, err := h.h.OnGetTask(ctx, &a2a.TaskQueryParams{ID: a2a.TaskID(p.ID), HistoryLength: p.HistoryLength})
		if err != nil {
			return nil, err
		}
		return v1Task(t), nil
	case "ListTasks":
		var p listTasksParams
		if err := json.Unmarshal(orEmpty(params), &p); err != nil {
			return nil, fmt.Errorf("params: %w", a2a.ErrInvalidParams)
		}
		page, err := h.h.listTasks(ctx, p)
		if err != nil {
			return nil, err
		}
		tasks := make([]any, len(page.tasks))
		for i, t := range page.tasks {
			tasks[i] = v1Task(t)
		}
		return map[string]any{"tasks": tasks, "nextPageToken": page.next, "pageSize": page.pageSize, "totalSize": page.total}, nil
	case "CancelTask":
		id, err := decodeV1ID(params)
		if err != nil {
			return nil, err
		}
		t, err := h.h.OnCancelTask(ctx, &a2a.TaskIDParams{ID: id})
		if err != nil {
			return nil, err
		}
		return v1Task(t), nil
	case "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig":
		return h.pushCall(ctx, method, params)
	case "GetExtendedAgentCard":
		return h.extendedCard(ctx)
	}
	return nil, fmt.Errorf("%s: %w", quote(method), a2a.ErrMethodNotFound)
}

// stream starts a streaming v1.0 operation. An error is a refusal before
// the first event.
func (h v1) stream(ctx context.Context, method string, params json.RawMessage) (iter.Seq2[a2a.Event, error], error) {
	switch method {
	case "SendStreamingMessage":
		p, err := decodeV1Send(params)
		if err != nil {
			return nil, err
		}
		return h.h.OnSendMessageStream(ctx, p), nil
	case "SubscribeToTask":
		id, err := decodeV1ID(params)
		if err != nil {
			return nil, err
		}
		return h.h.OnResubscribeToTask(ctx, &a2a.TaskIDParams{ID: id}), nil
	}
	return nil, fmt.Errorf("%s: %w", quote(method), a2a.ErrMethodNotFound)
}

// writeSSE writes events as Server-Sent Events, frame giving each event's
// SSE event name ("" for none) and data; an error after the first event is
// framed too and ends the stream. An error before the first event goes to
// refuse instead, as a plain response.
func writeSSE(ctx context.Context, log *slog.Logger, w http.ResponseWriter, events iter.Seq2[a2a.Event, error], refuse func(error), frame func(a2a.Event, error) (string, any)) {
	next, stop := iter.Pull2(events)
	defer stop()
	ev, err, ok := next()
	if !ok {
		return
	}
	if err != nil {
		refuse(err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for ok {
		name, data := frame(ev, err)
		b, merr := json.Marshal(data)
		if merr != nil {
			log.ErrorContext(ctx, "a2a: encoding a v1.0 event failed", "error", merr)
			return
		}
		if name != "" {
			if _, werr := fmt.Fprintf(w, "event: %s\n", name); werr != nil {
				return
			}
		}
		if _, werr := fmt.Fprintf(w, "data: %s\n\n", b); werr != nil {
			return
		}
		if rc.Flush() != nil || err != nil {
			return
		}
		ev, err, ok = next()
	}
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

func decodeV1ID(raw json.RawMessage) (a2a.TaskID, error) {
	var p struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(orEmpty(raw), &p); err != nil {
		return "", fmt.Errorf("params: %w", a2a.ErrInvalidParams)
	}
	return a2a.TaskID(p.ID), nil
}

// v1Part is a v1.0 Part: exactly one of text, raw, url, data.
type v1Part struct {
	Text      *string         `json:"text,omitempty"`
	Raw       *string         `json:"raw,omitempty"`
	URL       *string         `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
}

type v1Message struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Parts            []v1Part       `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitempty"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

// decodeV1Send reads a SendMessageRequest into a2a-go's params.
func decodeV1Send(raw json.RawMessage) (*a2a.MessageSendParams, error) {
	var p struct {
		Message       *v1Message `json:"message"`
		Configuration *struct {
			AcceptedOutputModes []string      `json:"acceptedOutputModes"`
			HistoryLength       *int          `json:"historyLength"`
			ReturnImmediately   bool          `json:"returnImmediately"`
			Push                *v1PushConfig `json:"taskPushNotificationConfig"`
			// PushAlias is the name the spec's prose example uses.
			PushAlias *v1PushConfig `json:"pushNotificationConfig"`
		} `json:"configuration"`
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(orEmpty(raw), &p); err != nil {
		return nil, fmt.Errorf("params: %v: %w", err, a2a.ErrInvalidParams)
	}
	if p.Message == nil {
		return nil, invalidParams("params.message is required")
	}
	m := &a2a.Message{ID: p.Message.MessageID, ContextID: p.Message.ContextID, TaskID: a2a.TaskID(p.Message.TaskID),
		Metadata: p.Message.Metadata, Extensions: p.Message.Extensions, Role: a2a.MessageRoleUser}
	switch p.Message.Role {
	case "ROLE_USER", "":
	case "ROLE_AGENT":
		m.Role = a2a.MessageRoleAgent
	default:
		return nil, invalidParams("message.role must be ROLE_USER or ROLE_AGENT")
	}
	for i, part := range p.Message.Parts {
		ap, err := fromV1Part(i, part)
		if err != nil {
			return nil, err
		}
		m.Parts = append(m.Parts, ap)
	}
	out := &a2a.MessageSendParams{Message: m, Metadata: p.Metadata}
	if c := p.Configuration; c != nil {
		blocking := !c.ReturnImmediately
		out.Config = &a2a.MessageSendConfig{AcceptedOutputModes: c.AcceptedOutputModes, HistoryLength: c.HistoryLength, Blocking: &blocking}
		if pc := cmp.Or(c.Push, c.PushAlias); pc != nil {
			cfg := pc.config()
			out.Config.PushConfig = &cfg
		}
	}
	return out, nil
}

func fromV1Part(i int, p v1Part) (a2a.Part, error) {
	n := 0
	for _, set := range []bool{p.Text != nil, p.Raw != nil, p.URL != nil, len(p.Data) > 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, invalidParams(fmt.Sprintf("part %d must have exactly one of text, raw, url, data", i))
	}
	meta := a2a.FileMeta{MimeType: p.MediaType, Name: p.Filename}
	switch {
	case p.Text != nil:
		return a2a.TextPart{Text: *p.Text, Metadata: p.Metadata}, nil
	case p.Raw != nil:
		return a2a.FilePart{File: a2a.FileBytes{Bytes: *p.Raw, FileMeta: meta}, Metadata: p.Metadata}, nil
	case p.URL != nil:
		return a2a.FilePart{File: a2a.FileURI{URI: *p.URL, FileMeta: meta}, Metadata: p.Metadata}, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(p.Data, &obj); err != nil || obj == nil {
		return nil, invalidParams(fmt.Sprintf("part %d: data must be a JSON object", i))
	}
	return a2a.DataPart{Data: obj, Metadata: p.Metadata}, nil
}

// v1State is a state's v1.0 enum name.
func v1State(s a2a.TaskState) string {
	if s == "" {
		return "TASK_STATE_UNSPECIFIED"
	}
	return "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(string(s), "-", "_"))
}

func v1Parts(ps a2a.ContentParts) []any {
	out := make([]any, 0, len(ps))
	for _, p := range ps {
		switch v := p.(type) {
		case a2a.TextPart:
			out = append(out, withMeta(map[string]any{"text": v.Text}, v.Metadata))
		case a2a.DataPart:
			out = append(out, withMeta(map[string]any{"data": v.Data, "mediaType": mimeJSON}, v.Metadata))
		case a2a.FilePart:
			m := map[string]any{}
			var meta a2a.FileMeta
			switch f := v.File.(type) {
			case a2a.FileURI:
				m["url"], meta = f.URI, f.FileMeta
			case a2a.FileBytes:
				m["raw"], meta = f.Bytes, f.FileMeta
			}
			if meta.MimeType != "" {
				m["mediaType"] = meta.MimeType
			}
			if meta.Name != "" {
				m["filename"] = meta.Name
			}
			out = append(out, withMeta(m, v.Metadata))
		}
	}
	return out
}

func withMeta(m, meta map[string]any) map[string]any {
	if len(meta) > 0 {
		m["metadata"] = meta
	}
	return m
}

func v1Msg(m *a2a.Message) map[string]any {
	if m == nil {
		return nil
	}
	role := "ROLE_USER"
	if m.Role == a2a.MessageRoleAgent {
		role = "ROLE_AGENT"
	}
	out := map[string]any{"messageId": m.ID, "role": role, "parts": v1Parts(m.Parts)}
	if m.ContextID != "" {
		out["contextId"] = m.ContextID
	}
	if m.TaskID != "" {
		out["taskId"] = string(m.TaskID)
	}
	return withMeta(out, m.Metadata)
}

func v1Status(s a2a.TaskStatus) map[string]any {
	out := map[string]any{"state": v1State(s.State)}
	if s.Message != nil {
		out["message"] = v1Msg(s.Message)
	}
	if s.Timestamp != nil {
		out["timestamp"] = s.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return out
}

func v1Artifact(a *a2a.Artifact) map[string]any {
	out := map[string]any{"artifactId": string(a.ID), "parts": v1Parts(a.Parts)}
	if a.Name != "" {
		out["name"] = a.Name
	}
	if a.Description != "" {
		out["description"] = a.Description
	}
	return withMeta(out, a.Metadata)
}

func v1Task(t *a2a.Task) map[string]any {
	out := map[string]any{"id": string(t.ID), "contextId": t.ContextID, "status": v1Status(t.Status)}
	if len(t.Artifacts) > 0 {
		arts := make([]any, len(t.Artifacts))
		for i, a := range t.Artifacts {
			arts[i] = v1Artifact(a)
		}
		out["artifacts"] = arts
	}
	if len(t.History) > 0 {
		hist := make([]any, len(t.History))
		for i, m := range t.History {
			hist[i] = v1Msg(m)
		}
		out["history"] = hist
	}
	return withMeta(out, t.Metadata)
}

// v1SendResult is a SendMessageResponse.
func v1SendResult(r a2a.SendMessageResult) map[string]any {
	switch v := r.(type) {
	case *a2a.Task:
		return map[string]any{"task": v1Task(v)}
	case *a2a.Message:
		return map[string]any{"message": v1Msg(v)}
	}
	return map[string]any{}
}

// v1Event is a StreamResponse. v1.0 has no "final": a stream ends at a
// terminal or interrupted state.
func v1Event(ev a2a.Event) map[string]any {
	switch v := ev.(type) {
	case *a2a.Task:
		return map[string]any{"task": v1Task(v)}
	case *a2a.Message:
		return map[string]any{"message": v1Msg(v)}
	case *a2a.TaskStatusUpdateEvent:
		return map[string]any{"statusUpdate": withMeta(map[string]any{"taskId": string(v.TaskID), "contextId": v.ContextID, "status": v1Status(v.Status)}, v.Metadata)}
	case *a2a.TaskArtifactUpdateEvent:
		u := map[string]any{"taskId": string(v.TaskID), "contextId": v.ContextID, "artifact": v1Artifact(v.Artifact)}
		if v.Append {
			u["append"] = true
		}
		if v.LastChunk {
			u["lastChunk"] = true
		}
		return map[string]any{"artifactUpdate": withMeta(u, v.Metadata)}
	}
	return map[string]any{}
}

// v1Err maps an error to its v1.0 JSON-RPC code and ErrorInfo reason; the
// detail is the client-safe text the v0.3 mount puts in error.data.error.
func v1Err(err error) *v1Error {
	var ve *v1Error
	if errors.As(err, &ve) {
		return ve
	}
	if errors.Is(err, errUnauthenticated) {
		return &v1Error{code: -32000, message: "Authentication required", reason: "UNAUTHENTICATED", detail: strings.TrimSuffix(err.Error(), ": "+a2a.ErrServerError.Error()), http: http.StatusUnauthorized}
	}
	for _, e := range []struct {
		sentinel error
		code     int
		message  string
		reason   string
	}{
		{a2a.ErrParseError, -32700, "Invalid JSON payload", ""},
		{a2a.ErrInvalidRequest, -32600, "Request payload validation error", ""},
		{a2a.ErrMethodNotFound, -32601, "Method not found", ""},
		{a2a.ErrInvalidParams, -32602, "Invalid parameters", "INVALID_PARAMS"},
		{a2a.ErrServerError, -32000, "Server error", ""},
		{a2a.ErrTaskNotFound, -32001, "Task not found", "TASK_NOT_FOUND"},
		{a2a.ErrTaskNotCancelable, -32002, "Task cannot be canceled", "TASK_NOT_CANCELABLE"},
		{a2a.ErrPushNotificationNotSupported, -32003, "Push notifications are not supported", "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{a2a.ErrUnsupportedOperation, -32004, "This operation is not supported", "UNSUPPORTED_OPERATION"},
		{a2a.ErrAuthenticatedExtendedCardNotConfigured, -32007, "Extended agent card is not configured", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
	} {
		if errors.Is(err, e.sentinel) {
			detail := ""
			if err != e.sentinel {
				detail = strings.TrimSuffix(err.Error(), ": "+e.sentinel.Error())
			}
			return &v1Error{code: e.code, message: e.message, reason: e.reason, detail: detail}
		}
	}
	return &v1Error{code: -32603, message: "Internal error"}
}

func (e *v1Error) Error() string { return e.message }

func v1Envelope(id, result any, e *v1Error) map[string]any {
	env := map[string]any{"jsonrpc": "2.0", "id": id}
	if e == nil {
		env["result"] = result
		return env
	}
	body := map[string]any{"code": e.code, "message": e.message}
	if info := e.errorInfo(); info != nil {
		body["data"] = []any{info}
	}
	env["error"] = body
	return env
}

// errorInfo is e's google.rpc.ErrorInfo, nil for an error with neither a
// reason nor a detail.
func (e *v1Error) errorInfo() map[string]any {
	if e.reason == "" && e.detail == "" {
		return nil
	}
	info := map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "domain": "a2a-protocol.org"}
	if e.reason != "" {
		info["reason"] = e.reason
	} else {
		info["reason"] = strings.ToUpper(strings.ReplaceAll(e.message, " ", "_"))
	}
	if e.detail != "" {
		info["metadata"] = map[string]any{"detail": e.detail}
	}
	return info
}

// writeV1 writes a JSON-RPC answer; a refusal for want of authentication
// is HTTP 401 as well.
func writeV1(w http.ResponseWriter, id, result any, e *v1Error) {
	w.Header().Set("Content-Type", "application/json")
	if e != nil {
		if code, _ := e.httpStatus(); code == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", "Bearer")
			w.WriteHeader(code)
		}
	}
	_ = json.NewEncoder(w).Encode(v1Envelope(id, result, e))
}

// v1Card is the v1.0 shape of the plugin's card: the JSON-RPC binding at
// the url, and the HTTP+JSON binding under it.
func v1Card(c *a2a.AgentCard) map[string]any {
	skills := make([]any, len(c.Skills))
	for i, s := range c.Skills {
		skills[i] = map[string]any{"id": s.ID, "name": s.Name, "description": s.Description, "tags": s.Tags}
	}
	caps := map[string]any{"streaming": true, "pushNotifications": c.Capabilities.PushNotifications, "extendedAgentCard": c.SupportsAuthenticatedExtendedCard}
	if len(c.Capabilities.Extensions) > 0 {
		exts := make([]any, len(c.Capabilities.Extensions))
		for i, e := range c.Capabilities.Extensions {
			exts[i] = map[string]any{"uri": e.URI, "description": e.Description, "params": e.Params}
		}
		caps["extensions"] = exts
	}
	return map[string]any{
		"name":        c.Name,
		"description": c.Description,
		"supportedInterfaces": []any{
			map[string]any{"url": c.URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
			map[string]any{"url": c.URL, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
		},
		"version":            c.Version,
		"capabilities":       caps,
		"defaultInputModes":  c.DefaultInputModes,
		"defaultOutputModes": c.DefaultOutputModes,
		"skills":             skills,
	}
}
