package project

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/breadai/bread/core"
)

// httpTool calls a URL per call: the JSON arguments as the body (or as query
// parameters for GET and DELETE); a JSON response is the result, any other
// body the text; a non-2xx status is a TOOL_ERROR.
type httpTool struct {
	method  string
	url     *url.URL
	headers map[string]string
	client  *http.Client
}

const maxHTTPToolBody = 4 << 20

func newHTTPTool(raw toolFile, timeout time.Duration) (*httpTool, error) {
	u, err := url.Parse(raw.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, core.Errorf(core.CodeInvalidConfig, "an http tool needs an absolute http(s) url, got %q", raw.URL)
	}
	method := strings.ToUpper(raw.Method)
	if method == "" {
		method = http.MethodPost
	}
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return nil, core.Errorf(core.CodeInvalidConfig, "http tool method %q is not GET, POST, PUT, PATCH or DELETE", raw.Method)
	}
	return &httpTool{method: method, url: u, headers: raw.Headers, client: &http.Client{Timeout: timeout}}, nil
}

func (h *httpTool) execute(ctx context.Context, args json.RawMessage, _ core.ToolContext) (any, error) {
	u := *h.url
	var body io.Reader
	if h.method == http.MethodGet || h.method == http.MethodDelete {
		var params map[string]any
		if err := json.Unmarshal(args, &params); err == nil {
			q := u.Query()
			for k, v := range params {
				if s, ok := v.(string); ok {
					q.Set(k, s)
				} else {
					b, _ := json.Marshal(v)
					q.Set(k, string(b))
				}
			}
			u.RawQuery = q.Encode()
		}
	} else {
		body = bytes.NewReader(args)
	}
	req, err := http.NewRequestWithContext(ctx, h.method, u.String(), body)
	if err != nil {
		return nil, core.Errorf(core.CodeToolError, "building the request failed: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, core.Errorf(core.CodeToolError, "%s %s failed: %v", h.method, h.url.Host, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPToolBody+1))
	if err != nil {
		return nil, core.Errorf(core.CodeToolError, "reading the response failed: %v", err)
	}
	if len(b) > maxHTTPToolBody {
		return nil, core.Errorf(core.CodeToolError, "the response is larger than %d bytes", maxHTTPToolBody)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &core.BreadError{Code: core.CodeToolError, Message: fmt.Sprintf("%s %s answered HTTP %d: %s", h.method, h.url.Host, resp.StatusCode, truncate(string(b), 300)), Context: map[string]any{"status": resp.StatusCode}}
	}
	if json.Valid(b) && len(bytes.TrimSpace(b)) > 0 {
		return json.RawMessage(b), nil
	}
	return string(b), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
