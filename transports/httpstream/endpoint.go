package httpstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/breadai/bread/core"
)

// Endpoint is a remote bread server, as both remote agents call it.
type Endpoint struct {
	// URL is the server's base URL, for example http://research:3000.
	URL string
	// Headers are added to every request, before the signer runs.
	Headers http.Header
	// Signer, when set, signs every request (and so every reconnect).
	Signer core.BreadSigner
	// Client sends the requests; nil is http.DefaultClient.
	Client *http.Client
	// Accept is the media type the format streams.
	Accept string
	// Detach starts runs with "detach": true, so that a dropped connection
	// does not cancel them: a client that reconnects sets it, and cancels
	// a run it gives up on with CancelRun.
	Detach bool
}

// StartRun posts a run request to /agents/{agentID}/run and returns the
// streaming response, whose status is 200.
func (e Endpoint) StartRun(ctx context.Context, agentID string, input any, opts core.RunOptions) (*http.Response, error) {
	body := struct {
		Input   any                  `json:"input"`
		Session *core.SessionOptions `json:"session,omitempty"`
		Skill   string               `json:"skill,omitempty"`
		Detach  bool                 `json:"detach,omitempty"`
	}{Input: input, Skill: opts.Skill, Detach: e.Detach}
	if opts.Session.ID != "" || len(opts.Session.Tags) > 0 {
		body.Session = &opts.Session
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, &core.BreadError{Code: core.CodeValidationError, Message: "the remote agent's input cannot be encoded as JSON", Cause: err}
	}
	return e.send(ctx, http.MethodPost, "/agents/"+url.PathEscape(agentID)+"/run", raw, "")
}

// TailRun opens the passive stream of runID after lastSeq.
func (e Endpoint) TailRun(ctx context.Context, runID string, lastSeq int64) (*http.Response, error) {
	return e.send(ctx, http.MethodGet, "/runs/"+url.PathEscape(runID)+"/stream", nil, strconv.FormatInt(lastSeq, 10))
}

// CancelRun asks the server to cancel runID (POST /runs/{runId}/cancel).
// A run that is no longer running there is REMOTE_AGENT_ERROR with status
// 404.
func (e Endpoint) CancelRun(ctx context.Context, runID string) error {
	res, err := e.send(ctx, http.MethodPost, "/runs/"+url.PathEscape(runID)+"/cancel", nil, "")
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4096))
	return res.Body.Close()
}

func (e Endpoint) send(ctx context.Context, method, path string, body []byte, lastEventID string) (*http.Response, error) {
	target := strings.TrimRight(e.URL, "/") + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, &core.BreadError{Code: core.CodeRemoteAgentError, Message: "invalid remote agent URL", Context: map[string]any{"url": e.URL}, Cause: err}
	}
	for k, vs := range e.Headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", e.Accept)
	// The calling run's delegation depth: the remote server starts its
	// run that deep, so a cycle across servers meets the limit.
	core.SetDelegationHeader(ctx, req.Header)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	if e.Signer != nil {
		if err := e.Signer.Sign(ctx, req.Header); err != nil {
			return nil, &core.BreadError{Code: core.CodeRemoteAgentError, Message: "signing the remote agent request failed", Context: map[string]any{"url": e.URL}, Cause: err}
		}
	}
	client := e.Client
	if client == nil {
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, TransportError(ctx, e.URL, err)
	}
	if res.StatusCode != http.StatusOK {
		defer res.Body.Close()
		return nil, statusError(e.URL, res)
	}
	return res, nil
}

// statusError turns a refused request into REMOTE_AGENT_ERROR, naming the
// remote's own error code when it sent one.
func statusError(u string, res *http.Response) error {
	ctx := map[string]any{"url": u, "status": res.StatusCode}
	var body struct {
		Error core.ClientError `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	if json.Unmarshal(raw, &body) == nil && body.Error.Code != "" {
		ctx["remoteCode"] = body.Error.Code
	}
	return &core.BreadError{
		Code:    core.CodeRemoteAgentError,
		Message: "remote agent request failed: " + res.Status,
		Context: ctx,
	}
}

// TransportError classifies a failed request or read: RUN_CANCELLED when
// ctx ended (the caller cancelled), REMOTE_AGENT_ERROR otherwise.
func TransportError(ctx context.Context, u string, err error) error {
	if ctx.Err() != nil {
		return &core.BreadError{Code: core.CodeRunCancelled, Message: "the remote agent run was cancelled", Context: map[string]any{"url": u}, Cause: context.Cause(ctx)}
	}
	var be *core.BreadError
	if errors.As(err, &be) {
		return be
	}
	return &core.BreadError{Code: core.CodeRemoteAgentError, Message: "the connection to the remote agent failed", Context: map[string]any{"url": u}, Cause: err}
}

// CrumbError is the error a terminal agent:error crumb reports, paired with
// the crumb when a remote agent yields it; nil for any other crumb.
func CrumbError(c core.Crumb) error {
	ae, ok := c.(*core.AgentError)
	if !ok {
		return nil
	}
	if ae.Error == nil {
		return &core.BreadError{Code: core.CodeAgentError, Message: "the remote run failed"}
	}
	return ae.Error
}
