package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/breadai/bread/core"
)

// maxErrorText bounds how much of a vendor's error text reaches a message.
const maxErrorText = 500

// httpFailure is what an adapter knows about a failed call, whatever SDK it
// came through.
type httpFailure struct {
	provider string
	status   int         // 0 when the failure was not an HTTP status
	header   http.Header // response headers, for Retry-After
	vendor   string      // the vendor's error code or type, when it has one
	text     string      // the vendor's message or raw body
}

// contextTooLongMarkers are the codes and phrases vendors use for an input
// over the model's context window (OpenAI and its imitators, Anthropic,
// Gemini, Bedrock, Cohere, Mistral).
var contextTooLongMarkers = []string{
	"context_length_exceeded",
	"maximum context length",
	"context length",
	"context window",
	"prompt is too long",
	"input is too long",
	"too many tokens",
	"exceeds the maximum number of tokens",
	"input token count",
	"too many input tokens",
	"string_above_max_length",
	"reduce the length",
}

func isContextTooLong(vendor, text string) bool {
	s := strings.ToLower(vendor + " " + text)
	for _, m := range contextTooLongMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// breadError classifies f into a stable code and builds a message that holds
// no secret.
func (f httpFailure) breadError(secrets ...string) *core.BreadError {
	code := core.CodeProviderError
	switch {
	case f.status == http.StatusUnauthorized || f.status == http.StatusForbidden:
		code = core.CodeProviderAuth
	case f.status == http.StatusTooManyRequests || strings.EqualFold(f.vendor, "ThrottlingException") || strings.EqualFold(f.vendor, "RESOURCE_EXHAUSTED") || strings.EqualFold(f.vendor, "rate_limit_error"):
		code = core.CodeRateLimited
	case (f.status == 0 || f.status == http.StatusBadRequest || f.status == http.StatusRequestEntityTooLarge) && isContextTooLong(f.vendor, f.text):
		code = core.CodeContextTooLong
	}
	text := strings.TrimSpace(redact(f.text, secrets...))
	if len(text) > maxErrorText {
		text = text[:maxErrorText] + "…"
	}
	msg := f.provider + ": "
	if f.status != 0 {
		msg += "HTTP " + strconv.Itoa(f.status)
		if st := http.StatusText(f.status); st != "" {
			msg += " " + st
		}
	} else {
		msg += "request failed"
	}
	if text != "" {
		msg += ": " + text
	}
	ctx := map[string]any{"provider": f.provider}
	if f.status != 0 {
		ctx["status"] = f.status
	}
	if f.vendor != "" {
		ctx["vendorCode"] = redact(f.vendor, secrets...)
	}
	if code == core.CodeRateLimited {
		if d, ok := retryAfter(f.header, time.Now()); ok {
			ctx["retryAfter"] = d.Seconds()
		}
	}
	return &core.BreadError{Code: code, Message: msg, Context: ctx, Cause: errors.New(msg)}
}

// retryAfter reads Retry-After (seconds or an HTTP date) or, failing that,
// the retry-after-ms header some vendors send.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d.Round(time.Second), true
	}
	return 0, false
}

// secretParam matches credentials a vendor may echo back in a URL or body:
// ?key=..., api_key=..., Bearer tokens and sk-style keys.
var secretParam = regexp.MustCompile(`(?i)((?:api[_-]?key|key|token|access_token|x-goog-api-key)=)[^&\s"']+|(Bearer\s+)[A-Za-z0-9._~+/=-]+|\bsk-[A-Za-z0-9_-]{8,}`)

// redact removes every given secret and anything shaped like a credential.
func redact(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[REDACTED]")
		}
	}
	return secretParam.ReplaceAllStringFunc(s, func(m string) string {
		sub := secretParam.FindStringSubmatch(m)
		switch {
		case sub[1] != "":
			return sub[1] + "[REDACTED]"
		case sub[2] != "":
			return sub[2] + "[REDACTED]"
		default:
			return "[REDACTED]"
		}
	})
}

// streamCut is the error for a stream that ended before the vendor's final
// event: the connection dropped, or a proxy cut it.
func streamCut(provider string, cause error, secrets ...string) *core.BreadError {
	msg := provider + ": the stream ended before the model finished"
	if cause != nil {
		text := redact(cause.Error(), secrets...)
		if len(text) > maxErrorText {
			text = text[:maxErrorText] + "…"
		}
		msg = provider + ": the stream failed: " + text
	}
	return &core.BreadError{Code: core.CodeProviderError, Message: msg, Context: map[string]any{"provider": provider}, Cause: errors.New(msg)}
}

// transportError maps an error with no HTTP status (a refused connection, a
// decode failure, a cancelled context). A cancelled ctx yields ctx's own
// error, as the model port asks.
func transportError(ctx context.Context, provider string, err error, secrets ...string) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var be *core.BreadError
	if errors.As(err, &be) {
		return be
	}
	return httpFailure{provider: provider, text: err.Error()}.breadError(secrets...)
}

// configError is a factory-time error: a missing key or endpoint.
func configError(code, provider, format string, args ...any) *core.BreadError {
	return &core.BreadError{Code: code, Message: provider + ": " + fmt.Sprintf(format, args...), Context: map[string]any{"provider": provider}}
}
