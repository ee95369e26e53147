package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
)

// The HTTP+JSON (REST) binding of spec v1.0 (section 11): its routes sit
// under the path of the mount's url, beside the JSON-RPC endpoint at that
// path, and each one calls the v1.0 operation of the same name (v1.call,
// v1.stream), so both bindings answer a task identically. Bodies, query
// parameters and answers are the v1.0 JSON shapes; errors are an AIP-193
// Status ({"error": {code, status, message, details}}) whose details hold
// the same google.rpc.ErrorInfo the JSON-RPC binding puts in error.data.
// The optional /{tenant} prefix of the spec's routes is not served.

// restRoute is one HTTP+JSON route: its path under the mount's url, and the
// operation each HTTP method maps to.
type restRoute struct {
	path    string
	methods map[string]restOp
}

// restOp is an operation and how its request message is built from the
// HTTP request: the path parameters, the query, or the body.
type restOp struct {
	name  string
	query []restParam // read from the query string
	body  bool        // the body is the request message (path parameters added)
}

// restParam is a query parameter and its JSON type.
type restParam struct {
	name string
	kind byte // 's' string, 'n' number, 'b' boolean
}

var restRoutes = []restRoute{
	{"/message:send", map[string]restOp{http.MethodPost: {name: "SendMessage", body: true}}},
	{"/message:stream", map[string]restOp{http.MethodPost: {name: "SendStreamingMessage", body: true}}},
	{"/tasks", map[string]restOp{http.MethodGet: {name: "ListTasks", query: []restParam{
		{"contextId", 's'}, {"status", 's'}, {"pageSize", 'n'}, {"pageToken", 's'},
		{"historyLength", 'n'}, {"statusTimestampAfter", 's'}, {"includeArtifacts", 'b'}}}}},
	// {id} also carries the custom verbs: /tasks/{id}:cancel, :subscribe.
	{"/tasks/{id}", map[string]restOp{http.MethodGet: {name: "GetTask", query: []restParam{{"historyLength", 'n'}}}}},
	{"/tasks/{taskId}/pushNotificationConfigs", map[string]restOp{
		http.MethodPost: {name: "CreateTaskPushNotificationConfig", body: true},
		http.MethodGet:  {name: "ListTaskPushNotificationConfigs", query: []restParam{{"pageSize", 'n'}, {"pageToken", 's'}}}}},
	{"/tasks/{taskId}/pushNotificationConfigs/{id}", map[string]restOp{
		http.MethodGet:    {name: "GetTaskPushNotificationConfig"},
		http.MethodDelete: {name: "DeleteTaskPushNotificationConfig"}}},
	{"/extendedAgentCard", map[string]restOp{http.MethodGet: {name: "GetExtendedAgentCard"}}},
}

// taskVerbs are the custom methods on /tasks/{id}: the verb after the
// colon, and the operation each HTTP method maps to. The proto maps
// :subscribe to GET and the spec's prose (and the official JS client) to
// POST; both are served.
var taskVerbs = map[string]map[string]restOp{
	"cancel":    {http.MethodPost: {name: "CancelTask", body: true}},
	"subscribe": {http.MethodGet: {name: "SubscribeToTask"}, http.MethodPost: {name: "SubscribeToTask"}},
}

// restRoutes registers the HTTP+JSON routes under base, all under
// ActionRPC: a grant of a2a.rpc covers both bindings.
func (p *Plugin) restRoutes(r core.Router) {
	base := strings.TrimSuffix(p.rpcPath, "/")
	for _, rt := range restRoutes {
		r.Handle(ActionRPC, "*", base+rt.path, p.serveREST(rt))
	}
}

// serveREST serves one route: it builds the operation's request message
// and calls it as the JSON-RPC binding does.
func (p *Plugin) serveREST(rt restRoute) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.closed.Load() || p.rpc == nil {
			w.Header().Set("Retry-After", "5")
			http.Error(w, "the A2A endpoint is not running", http.StatusServiceUnavailable)
			return
		}
		if e := v1VersionError(r); e != nil {
			writeREST(w, e)
			return
		}
		methods := rt.methods
		vars := map[string]string{}
		for _, k := range []string{"id", "taskId"} {
			if v := r.PathValue(k); v != "" {
				vars[k] = v
			}
		}
		if rt.path == "/tasks/{id}" {
			if id, verb, ok := strings.Cut(vars["id"], ":"); ok {
				if methods, ok = taskVerbs[verb]; !ok {
					writeREST(w, &v1Error{code: -32601, message: "Method not found", detail: "tasks have no custom method " + quote(verb)})
					return
				}
				vars["id"] = id
			}
		}
		op, ok := methods[r.Method]
		if !ok {
			allow := make([]string, 0, len(methods))
			for m := range methods {
				allow = append(allow, m)
			}
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeREST(w, &v1Error{code: -32601, message: "Method not allowed", detail: r.Method + " is not served here", http: http.StatusMethodNotAllowed})
			return
		}
		params, err := restParams(r, op, vars)
		if err != nil {
			writeREST(w, v1Err(err))
			return
		}
		if r.Header.Get(core.DelegationDepthHeader) != "" {
			r = r.WithContext(core.DelegationFromHeader(r.Context(), r.Header))
		}
		ctx := withCardURL(r.Context(), p.advertised(r))
		h := v1{&handler{p: p}}
		if !v1Methods[op.name] {
			res, err := h.call(ctx, op.name, params)
			if err != nil {
				writeREST(w, v1Err(err))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(res)
			return
		}
		serveWithHeartbeat(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			events, err := h.stream(ctx, op.name, params)
			if err != nil {
				writeREST(w, v1Err(err))
				return
			}
			writeSSE(ctx, p.log, w, events, func(err error) { writeREST(w, v1Err(err)) },
				func(ev a2a.Event, err error) (string, any) {
					if err != nil {
						return "error", restStatus(v1Err(err))
					}
					return "", v1Event(ev)
				})
		}), flusher{w}, r, p.heartbeat())
	})
}

// restParams is the request message of op: the body (for a body op) with
// the path parameters set, or the path and query parameters.
func restParams(r *http.Request, op restOp, vars map[string]string) (json.RawMessage, error) {
	msg := map[string]any{}
	if op.body {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, invalidParams("the request body could not be read")
		}
		if len(strings.TrimSpace(string(b))) > 0 {
			d := json.NewDecoder(strings.NewReader(string(b)))
			d.UseNumber()
			var v any
			if err := d.Decode(&v); err != nil {
				return nil, fmt.Errorf("%w: %w", a2a.ErrParseError, err)
			}
			obj, ok := v.(map[string]any)
			if !ok {
				return nil, invalidParams("the request body must be a JSON object")
			}
			msg = obj
		}
	}
	q := r.URL.Query()
	for _, p := range op.query {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		switch p.kind {
		case 'n':
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, invalidParams(p.name + " must be a whole number")
			}
			msg[p.name] = n
		case 'b':
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, invalidParams(p.name + " must be true or false")
			}
			msg[p.name] = b
		default:
			msg[p.name] = v
		}
	}
	if s, ok := msg["status"].(string); ok && op.name == "ListTasks" && !strings.HasPrefix(s, "TASK_STATE_") {
		// The spec's query example names a state by its v0.3 name
		// (status=working).
		msg["status"] = v1State(a2a.TaskState(strings.ToLower(s)))
	}
	for k, v := range vars {
		msg[k] = v
	}
	return json.Marshal(msg)
}

// restStatuses are the HTTP status and the google.rpc.Code name of each
// error code (spec v1.0 section 5.4; the JSON-RPC standard codes as
// AIP-193 maps their meaning).
var restStatuses = map[int]struct {
	http   int
	status string
}{
	-32700: {http.StatusBadRequest, "INVALID_ARGUMENT"},
	-32600: {http.StatusBadRequest, "INVALID_ARGUMENT"},
	-32601: {http.StatusNotFound, "NOT_FOUND"},
	-32602: {http.StatusBadRequest, "INVALID_ARGUMENT"},
	-32603: {http.StatusInternalServerError, "INTERNAL"},
	-32001: {http.StatusNotFound, "NOT_FOUND"},
	-32002: {http.StatusConflict, "FAILED_PRECONDITION"},
	-32003: {http.StatusBadRequest, "UNIMPLEMENTED"},
	-32004: {http.StatusBadRequest, "UNIMPLEMENTED"},
	-32005: {http.StatusUnsupportedMediaType, "INVALID_ARGUMENT"},
	-32007: {http.StatusBadRequest, "FAILED_PRECONDITION"},
	-32009: {http.StatusBadRequest, "UNIMPLEMENTED"},
}

// serverErrorStatus is the HTTP status of a -32000 (server error) by the
// bread code its detail starts with: a busy session, task or checkpoint
// conflicts, a full instance is too many requests, a stopping one is
// unavailable.
func serverErrorStatus(detail string) (int, string) {
	code, _, _ := strings.Cut(detail, ":")
	switch code {
	case core.CodeConcurrencyLimit:
		return http.StatusTooManyRequests, "RESOURCE_EXHAUSTED"
	case core.CodeInstanceStopping, core.CodeNotStarted:
		return http.StatusServiceUnavailable, "UNAVAILABLE"
	case core.CodeForbidden:
		return http.StatusForbidden, "PERMISSION_DENIED"
	case "UNAUTHENTICATED":
		return http.StatusUnauthorized, "UNAUTHENTICATED"
	}
	return http.StatusConflict, "ABORTED"
}

// restStatus is e as an AIP-193 error body.
func restStatus(e *v1Error) map[string]any {
	code, status := e.httpStatus()
	msg := e.message
	if e.detail != "" {
		msg = e.detail
	}
	body := map[string]any{"code": code, "status": status, "message": msg}
	if info := e.errorInfo(); info != nil {
		body["details"] = []any{info}
	}
	return map[string]any{"error": body}
}

// httpStatus is e's HTTP status and google.rpc.Code name.
func (e *v1Error) httpStatus() (int, string) {
	s, ok := restStatuses[e.code]
	switch {
	case e.code == -32000:
		s.http, s.status = serverErrorStatus(e.detail)
	case !ok:
		s = restStatuses[-32603]
	}
	if e.http != 0 {
		s.http = e.http
	}
	return s.http, s.status
}

func writeREST(w http.ResponseWriter, e *v1Error) {
	code, _ := e.httpStatus()
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(restStatus(e))
}

// cardURLKey carries the url a request's card advertises (a url given as a
// path is completed with the request's scheme and host) to the extended
// card, which the handler builds without the request.
type cardURLKey struct{}

func withCardURL(ctx context.Context, url string) context.Context {
	return context.WithValue(ctx, cardURLKey{}, url)
}

func cardURLFrom(ctx context.Context, fallback string) string {
	if u, ok := ctx.Value(cardURLKey{}).(string); ok {
		return u
	}
	return fallback
}
