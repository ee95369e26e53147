package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/breadai/bread/core"
)

// RemoteOptions configure a remote A2A agent.
type RemoteOptions struct {
	// URL is the remote agent's base URL (its card is then at
	// /.well-known/agent-card.json under it) or the full URL of its Agent
	// Card (a URL whose path ends in .json). Required.
	URL string
	// Headers are sent with every request (the card's and the JSON-RPC
	// calls').
	Headers http.Header
	// Signer signs every request (an API key, OAuth2 client credentials).
	Signer core.BreadSigner
	// HTTPClient is the client requests go through (default
	// http.DefaultClient); it should have no overall timeout, since a
	// stream lasts as long as the remote run.
	HTTPClient *http.Client
}

// Remote is an A2A agent that a bread agent delegates to, or that bread.yaml
// maps to a local id (remoteAgents, type a2a): it implements
// core.RemoteAgent with a2a-go's client, sending the input as one message
// and relaying the remote task as crumbs.
type Remote struct {
	opts     RemoteOptions
	base     string
	cardPath string
	http     *http.Client

	mu     sync.Mutex
	client *a2aclient.Client
}

var _ core.RemoteAgent = (*Remote)(nil)

// NewRemote checks the options; the Agent Card is fetched on first use (and
// again after a failure).
func NewRemote(opts RemoteOptions) (*Remote, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, core.Errorf(core.CodeInvalidConfig, "a2a: remote url %q must be an absolute http(s) URL", opts.URL)
	}
	r := &Remote{opts: opts, cardPath: DefaultCardPath}
	if strings.HasSuffix(u.Path, ".json") {
		r.cardPath = u.Path
		u.Path = ""
	}
	u.RawQuery, u.Fragment = "", ""
	r.base = strings.TrimSuffix(u.String(), "/")
	base := opts.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	hc := *base
	hc.Transport = signing{next: rt, headers: opts.Headers, signer: opts.Signer}
	r.http = &hc
	return r, nil
}

// signing adds the configured headers and signature to every request.
type signing struct {
	next    http.RoundTripper
	headers http.Header
	signer  core.BreadSigner
}

func (s signing) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range s.headers {
		req.Header[k] = v
	}
	// The calling run's delegation depth (its context reaches the
	// request): the remote bread server starts its task that deep.
	core.SetDelegationHeader(req.Context(), req.Header)
	if s.signer != nil {
		if err := s.signer.Sign(req.Context(), req.Header); err != nil {
			return nil, fmt.Errorf("a2a: signing a request: %w", err)
		}
	}
	return s.next.RoundTrip(req)
}

// connect returns the client, resolving the card the first time.
func (r *Remote) connect(ctx context.Context) (*a2aclient.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		return r.client, nil
	}
	card, err := agentcard.NewResolver(r.http).Resolve(ctx, r.base, agentcard.WithPath(r.cardPath))
	if err != nil {
		return nil, &core.BreadError{Code: core.CodeRemoteAgentError, Message: "a2a: reading the Agent Card at " + r.base + r.cardPath + " failed", Cause: err}
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(r.http))
	if err != nil {
		return nil, &core.BreadError{Code: core.CodeRemoteAgentError, Message: "a2a: the Agent Card at " + r.base + r.cardPath + " offers no JSON-RPC endpoint", Cause: err}
	}
	r.client = c
	return c, nil
}

// Run implements core.RemoteAgent: the input becomes one user message (a
// string a text part, an object a data part, anything else its JSON as
// text) on the context opts.Session.ID names (none: the remote picks one,
// as bread-to-bread remotes send the session), streamed when the card says
// the agent streams. The remote task's
// id is the run id of the relayed crumbs and its context the session id:
// agent:run:start, text:delta per text chunk of an artifact or message,
// file:generated per file part with a uri, then agent:run:end (the text, or
// a lone data part's object, as output) on completed, or agent:error
// REMOTE_AGENT_ERROR on failed, canceled, rejected, or a state that asks
// for input or auth (which a relayed run cannot answer).
func (r *Remote) Run(ctx context.Context, agentID string, input any, opts core.RunOptions) iter.Seq2[core.Crumb, error] {
	return func(yield func(core.Crumb, error) bool) {
		c, err := r.connect(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		msg := a2a.NewMessage(a2a.MessageRoleUser, inputPart(input))
		msg.ContextID = opts.Session.ID
		rr := &relayRun{agentID: agentID, input: input, yield: yield}
		defer func() {
			if ctx.Err() != nil && rr.started && !rr.done {
				r.cancel(context.WithoutCancel(ctx), c, rr.runID)
			}
		}()
		for ev, err := range c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: msg}) {
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				rr.fail(&core.BreadError{Code: core.CodeRemoteAgentError, Message: "a2a: remote agent " + agentID + ": " + err.Error(), Cause: err})
				return
			}
			if rr.event(ev) {
				return
			}
		}
		if !rr.done && ctx.Err() == nil {
			rr.fail(&core.BreadError{Code: core.CodeRemoteAgentError, Message: "a2a: remote agent " + agentID + " ended its stream without a final state"})
		}
	}
}

// cancelTimeout bounds the tasks/cancel a cancelled relay sends.
const cancelTimeout = 5 * time.Second

// cancel asks the remote agent to cancel a task whose relay was cancelled
// (closing the stream alone does not stop every A2A server's task).
// Best-effort: a failure is only logged by the caller's absence of effect.
func (r *Remote) cancel(ctx context.Context, c *a2aclient.Client, taskID string) {
	ctx, stop := context.WithTimeout(ctx, cancelTimeout)
	defer stop()
	_, _ = c.CancelTask(ctx, &a2a.TaskIDParams{ID: a2a.TaskID(taskID)})
}

// inputPart is a run input as one part.
func inputPart(input any) a2a.Part {
	if s, ok := input.(string); ok {
		return a2a.TextPart{Text: s}
	}
	if obj := asObject(input); obj != nil {
		return a2a.DataPart{Data: obj}
	}
	b, err := json.Marshal(input)
	if err != nil {
		return a2a.TextPart{Text: fmt.Sprint(input)}
	}
	return a2a.TextPart{Text: string(b)}
}

// relayRun turns one remote task's events into crumbs.
type relayRun struct {
	agentID   string
	input     any
	yield     func(core.Crumb, error) bool
	runID     string
	sessionID string
	started   bool
	done      bool
	text      strings.Builder
	data      []map[string]any
}

func (rr *relayRun) base() core.CrumbBase {
	return core.CrumbBase{AgentID: rr.agentID, RunID: rr.runID, SessionID: rr.sessionID, Timestamp: core.NowMillis()}
}

// start yields agent:run:start once the remote ids are known.
func (rr *relayRun) start(info a2a.TaskInfo) bool {
	if rr.started {
		return true
	}
	rr.started = true
	rr.runID, rr.sessionID = string(info.TaskID), info.ContextID
	if rr.runID == "" {
		rr.runID = string(a2a.NewTaskID())
	}
	return rr.yield(&core.AgentRunStart{CrumbBase: rr.base(), Input: rr.input}, nil)
}

// parts yields a text:delta or file:generated per part and keeps data
// parts for the output.
func (rr *relayRun) parts(ps a2a.ContentParts) bool {
	for _, p := range ps {
		switch v := p.(type) {
		case a2a.TextPart:
			if v.Text == "" {
				continue
			}
			rr.text.WriteString(v.Text)
			if !rr.yield(&core.TextDelta{CrumbBase: rr.base(), Delta: v.Text}, nil) {
				return false
			}
		case a2a.DataPart:
			rr.data = append(rr.data, v.Data)
		case a2a.FilePart:
			if f, ok := v.File.(a2a.FileURI); ok {
				if !rr.yield(&core.FileGenerated{CrumbBase: rr.base(), URI: f.URI, MimeType: f.MimeType, Name: f.Name}, nil) {
					return false
				}
			}
		}
	}
	return true
}

// event relays one event; true ends the relay.
func (rr *relayRun) event(ev a2a.Event) bool {
	if !rr.start(ev.TaskInfo()) {
		return true
	}
	switch v := ev.(type) {
	case *a2a.Message:
		if !rr.parts(v.Parts) {
			return true
		}
		return rr.finish(a2a.TaskStateCompleted, nil)
	case *a2a.Task:
		for _, a := range v.Artifacts {
			if !rr.parts(a.Parts) {
				return true
			}
		}
		if v.Status.State.Terminal() || v.Status.State == a2a.TaskStateInputRequired || v.Status.State == a2a.TaskStateAuthRequired {
			return rr.finish(v.Status.State, v.Status.Message)
		}
	case *a2a.TaskArtifactUpdateEvent:
		if v.Artifact != nil && !rr.parts(v.Artifact.Parts) {
			return true
		}
	case *a2a.TaskStatusUpdateEvent:
		if v.Final || v.Status.State.Terminal() || v.Status.State == a2a.TaskStateInputRequired || v.Status.State == a2a.TaskStateAuthRequired {
			return rr.finish(v.Status.State, v.Status.Message)
		}
	}
	return false
}

// finish yields the terminal crumb of a final state.
func (rr *relayRun) finish(state a2a.TaskState, msg *a2a.Message) bool {
	rr.done = true
	if state == a2a.TaskStateCompleted {
		var out any = rr.text.String()
		if rr.text.Len() == 0 && len(rr.data) == 1 {
			out = rr.data[0]
		}
		rr.yield(&core.AgentRunEnd{CrumbBase: rr.base(), Output: out}, nil)
		return true
	}
	why := "ended " + string(state)
	switch state {
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		why = "asks for " + strings.TrimSuffix(string(state), "-required") + ", which a relayed run cannot give"
	}
	if t := messageText(msg); t != "" {
		why += ": " + t
	}
	rr.fail(&core.BreadError{Code: core.CodeRemoteAgentError, Message: "a2a: remote agent " + rr.agentID + " " + why})
	return true
}

func (rr *relayRun) fail(err *core.BreadError) {
	rr.done = true
	b := rr.base()
	rr.yield(&core.AgentError{CrumbBase: b, Error: err}, err)
}

func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var parts []string
	for _, p := range m.Parts {
		if t, ok := p.(a2a.TextPart); ok && t.Text != "" {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}
