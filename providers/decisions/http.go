package decisions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/breadai/bread/core"
)

// HTTPOptions configure an HTTPDecider.
type HTTPOptions struct {
	// Client sends the request; nil is a fresh http.Client.
	Client *http.Client
	// Timeout bounds one decision (default 10s); the caller's context can
	// only shorten it.
	Timeout time.Duration
	// Headers are sent with every request (an API key, say).
	Headers map[string]string
}

// HTTPDecider asks a classifier service: POST {prompt, options, input} as
// JSON, expecting {choice, confidence?, reason?} back.
type HTTPDecider struct {
	url  string
	opts HTTPOptions
}

// NewHTTPDecider returns a decider that posts to url.
func NewHTTPDecider(url string, opts HTTPOptions) *HTTPDecider {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	return &HTTPDecider{url: url, opts: opts}
}

const maxResponse = 1 << 20

// Decide implements Decider.
func (d *HTTPDecider) Decide(ctx context.Context, q Question) (Decision, error) {
	if err := Validate(q); err != nil {
		return Decision{}, err
	}
	body, err := json.Marshal(q)
	if err != nil {
		return Decision{}, &core.BreadError{Code: core.CodeValidationError, Message: "the decision input is not JSON-encodable: " + err.Error(), Cause: err}
	}
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(body))
	if err != nil {
		return Decision{}, &core.BreadError{Code: core.CodeInvalidConfig, Message: "bad classifier URL: " + err.Error(), Cause: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range d.opts.Headers {
		req.Header.Set(k, v)
	}
	resp, err := d.opts.Client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(context.Cause(ctx), context.Canceled) {
			return Decision{}, &core.BreadError{Code: CodeDecisionTimeout, Message: "the classifier did not answer within " + d.opts.Timeout.String(), Cause: err}
		}
		if ctx.Err() != nil {
			return Decision{}, ctx.Err()
		}
		return Decision{}, &core.BreadError{Code: core.CodeProviderError, Message: "the classifier could not be reached", Cause: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Decision{}, &core.BreadError{Code: CodeDecisionTimeout, Message: "the classifier did not answer within " + d.opts.Timeout.String(), Cause: err}
		}
		return Decision{}, &core.BreadError{Code: core.CodeProviderError, Message: "reading the classifier's answer failed", Cause: err}
	}
	if resp.StatusCode >= 300 {
		code := core.CodeProviderError
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			code = core.CodeProviderAuth
		case http.StatusTooManyRequests:
			code = core.CodeRateLimited
		}
		be := &core.BreadError{Code: code, Message: "the classifier answered HTTP " + strconv.Itoa(resp.StatusCode), Context: map[string]any{"status": resp.StatusCode}}
		if ra, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && code == core.CodeRateLimited {
			be.Context["retryAfter"] = float64(ra)
		}
		return Decision{}, be
	}
	if len(raw) > maxResponse {
		return Decision{}, &core.BreadError{Code: CodeDecisionInvalid, Message: "the classifier's answer is larger than 1 MiB"}
	}
	var dec Decision
	if err := json.Unmarshal(raw, &dec); err != nil {
		return Decision{}, &core.BreadError{Code: CodeDecisionInvalid, Message: "the classifier's answer is not the expected JSON {choice, confidence, reason}", Cause: err}
	}
	if !slices.Contains(q.Options, dec.Choice) {
		return Decision{}, invalidChoice(dec.Choice, q.Options)
	}
	if dec.Confidence < 0 || dec.Confidence > 1 {
		return Decision{}, &core.BreadError{Code: CodeDecisionInvalid, Message: "the classifier's confidence " + strconv.FormatFloat(dec.Confidence, 'g', -1, 64) + " is outside [0,1]"}
	}
	return dec, nil
}
