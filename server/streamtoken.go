package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/breadai/bread/core"
)

// Stream tokens let a client that cannot set headers (a browser's
// EventSource) tail one run: GET /runs/{runId}/stream?access_token=<token>.
const (
	// ActionRunStreamToken names POST /runs/{runId}/stream-token, which
	// mints a token for that run.
	ActionRunStreamToken = core.ActionRunStreamToken
	// StreamTokenHeader carries a token minted for the run a run-starting
	// route (POST /agents/{id}/run, POST /pipelines/{id}/run,
	// POST /resume/{checkpointId}) runs; see StartHeaders.
	StreamTokenHeader = "X-Bread-Stream-Token"
	// StreamTokenQuery is the query parameter that carries a token.
	StreamTokenQuery = "access_token"
	// ClaimStreamRun is the claim of an identity a stream token
	// authenticated: the one run it may tail.
	ClaimStreamRun = "bread.streamRun"
	// DefaultStreamTokenTTL is how long a token lasts unless configured.
	DefaultStreamTokenTTL = 5 * time.Minute
	// MinStreamTokenKey is the shortest accepted signing key, in bytes.
	MinStreamTokenKey = 32
)

const streamTokenPrefix = "bst1."

// StreamTokens mints and checks stream tokens: HMAC-SHA256 signed, bound
// to one run and to the identity that minted it, expiring after a TTL. A
// token authenticates (Strategy) only GET /runs/{runId}/stream of its run,
// as its minter (subject, issuer and strategy), and Authorize restricts
// such an identity to that one action and run.
type StreamTokens struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// NewStreamTokens returns a minter with key (at least MinStreamTokenKey
// bytes; empty generates a random key, good for this process only: tokens
// then fail on other replicas and after a restart) and ttl (<= 0:
// DefaultStreamTokenTTL).
func NewStreamTokens(key []byte, ttl time.Duration) (*StreamTokens, error) {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
	}
	if len(key) < MinStreamTokenKey {
		return nil, core.Errorf(core.CodeInvalidConfig, "a stream token key needs at least %d bytes", MinStreamTokenKey)
	}
	if ttl <= 0 {
		ttl = DefaultStreamTokenTTL
	}
	return &StreamTokens{key: key, ttl: ttl, now: time.Now}, nil
}

// WithClock returns a copy of t that tells the time, for minting and for
// checking expiry, by now (nil: time.Now). A test moves such a clock on
// instead of waiting for a token to expire.
func (t *StreamTokens) WithClock(now func() time.Time) *StreamTokens {
	c := *t
	c.now = now
	if c.now == nil {
		c.now = time.Now
	}
	return &c
}

type streamClaims struct {
	Run      string `json:"r"`
	Exp      int64  `json:"e"` // Unix milliseconds
	Subject  string `json:"s,omitempty"`
	Strategy string `json:"t,omitempty"`
	Issuer   string `json:"i,omitempty"`
}

// Mint returns a token for runID on behalf of id, and when it expires.
func (t *StreamTokens) Mint(id *core.AuthIdentity, runID string) (string, time.Time) {
	exp := t.now().Add(t.ttl)
	c := streamClaims{Run: runID, Exp: exp.UnixMilli()}
	if id != nil {
		c.Subject = id.Subject
		c.Strategy, _ = id.Claims["bread.strategy"].(string)
		c.Issuer, _ = id.Claims["iss"].(string)
	}
	body, _ := json.Marshal(c)
	signed := streamTokenPrefix + base64.RawURLEncoding.EncodeToString(body)
	return signed + "." + base64.RawURLEncoding.EncodeToString(t.mac(signed)), exp
}

func (t *StreamTokens) mac(s string) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte(s))
	return m.Sum(nil)
}

var (
	errStreamTokenInvalid = &core.BreadError{Code: core.CodeUnauthorized, Message: "invalid stream token"}
	errStreamTokenExpired = &core.BreadError{Code: core.CodeUnauthorized, Message: "stream token expired"}
	errStreamTokenRun     = &core.BreadError{Code: core.CodeUnauthorized, Message: "stream token is for another run"}
)

// verify checks a token's signature and expiry and returns its claims.
func (t *StreamTokens) verify(tok string) (streamClaims, error) {
	var c streamClaims
	signed, sig, ok := strings.Cut(tok, ".")
	if !ok || signed+"." != streamTokenPrefix {
		return c, errStreamTokenInvalid
	}
	body, sig, ok := strings.Cut(sig, ".")
	if !ok {
		return c, errStreamTokenInvalid
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, t.mac(streamTokenPrefix+body)) {
		return c, errStreamTokenInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || json.Unmarshal(raw, &c) != nil || c.Run == "" {
		return c, errStreamTokenInvalid
	}
	if t.now().UnixMilli() >= c.Exp {
		return c, errStreamTokenExpired
	}
	return c, nil
}

// streamPath returns the run id of a GET /runs/{runId}/stream path.
func streamPath(r *http.Request) (string, bool) {
	if r.Method != http.MethodGet {
		return "", false
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/runs/")
	if !ok {
		return "", false
	}
	run, ok := strings.CutSuffix(rest, "/stream")
	if !ok || run == "" || strings.Contains(run, "/") {
		return "", false
	}
	return run, true
}

// StreamTokenRun returns the run a stream-token identity may tail.
func StreamTokenRun(id *core.AuthIdentity) (string, bool) {
	if id == nil {
		return "", false
	}
	run, ok := id.Claims[ClaimStreamRun].(string)
	return run, ok
}

// Strategy returns the auth strategy that reads a token: put it first in
// Options.Auth.Strategies. It looks only at GET /runs/{runId}/stream with
// an access_token query parameter (anything else is not its credential,
// so the next strategy tries); it removes that parameter from the request
// (no later handler, log or span sees it); a token that is not valid, is
// expired or names another run is 401. The identity is the minter's
// subject, issuer and strategy, plus ClaimStreamRun.
func (t *StreamTokens) Strategy() core.BreadAuthStrategy { return streamStrategy{t} }

type streamStrategy struct{ t *StreamTokens }

func (streamStrategy) Name() string { return "stream-token" }

func (s streamStrategy) Authenticate(r *http.Request) (*core.AuthIdentity, error) {
	if !strings.Contains(r.URL.RawQuery, StreamTokenQuery) {
		return nil, nil
	}
	q := r.URL.Query()
	if !q.Has(StreamTokenQuery) {
		return nil, nil
	}
	run, ok := streamPath(r)
	if !ok {
		return nil, nil // not accepted here: the other strategies decide
	}
	tok := q.Get(StreamTokenQuery)
	q.Del(StreamTokenQuery)
	u := *r.URL
	u.RawQuery = q.Encode()
	r.URL = &u
	r.RequestURI = u.RequestURI()
	c, err := s.t.verify(tok)
	if err != nil {
		return nil, err
	}
	if c.Run != run {
		return nil, errStreamTokenRun
	}
	claims := map[string]any{ClaimStreamRun: c.Run}
	if c.Strategy != "" {
		claims["bread.strategy"] = c.Strategy
	}
	if c.Issuer != "" {
		claims["iss"] = c.Issuer
	}
	return &core.AuthIdentity{Subject: c.Subject, Claims: claims}, nil
}

// Authorize wraps a route authorization: an identity a stream token
// authenticated may perform run.stream on its own run and nothing else;
// other identities go to inner. A nil inner stays nil.
func (t *StreamTokens) Authorize(inner core.AuthorizeFunc) core.AuthorizeFunc {
	if inner == nil {
		return nil
	}
	return func(ctx context.Context, id *core.AuthIdentity, action string, args map[string]string) bool {
		if run, ok := StreamTokenRun(id); ok {
			if action != core.ActionRunStream || args["runId"] != run {
				return false
			}
		}
		return inner(ctx, id, action, args)
	}
}

// Plugin returns the plugin (for engine.Config.Plugins) that serves
// POST /runs/{runId}/stream-token (ActionRunStreamToken; authorizeStream,
// the streams' policy, must allow the caller that run). store answers 404
// for an unknown run when it keeps run records (core.StoreRuns).
func (t *StreamTokens) Plugin(store core.BreadStore, authorizeStream core.AuthorizeStreamFunc) core.BreadPlugin {
	if authorizeStream == nil {
		authorizeStream = func(context.Context, *core.AuthIdentity, string) bool { return true }
	}
	return &streamTokenPlugin{t: t, store: core.NewStorage(store), authorize: authorizeStream}
}

type streamTokenPlugin struct {
	t         *StreamTokens
	store     *core.Storage
	authorize core.AuthorizeStreamFunc
}

func (*streamTokenPlugin) Name() string { return "stream_tokens" }

// Routes implements core.RoutesProvider.
func (p *streamTokenPlugin) Routes(r core.Router) {
	r.Handle(ActionRunStreamToken, http.MethodPost, "/runs/{runId}/stream-token", http.HandlerFunc(p.mint))
}

type streamTokenView struct {
	RunID     string `json:"runId"`
	Token     string `json:"token"`
	ExpiresAt int64  `json:"expiresAt"`
}

func (p *streamTokenPlugin) mint(w http.ResponseWriter, r *http.Request) {
	runID := r.PathValue("runId")
	id := core.IdentityFrom(r.Context())
	if !p.authorize(r.Context(), id, runID) {
		forbidden(w)
		return
	}
	if p.store.Has(core.StoreRuns) {
		_, err := p.store.GetRun(r.Context(), runID)
		switch {
		case errors.Is(err, core.ErrRunNotFound):
			writeError(w, http.StatusNotFound, core.CodeRunNotFound, "run "+quote(runID)+" not found")
			return
		case err != nil:
			writeFailure(w, r, slog.Default(), err)
			return
		}
	}
	tok, exp := p.t.Mint(id, runID)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, streamTokenView{RunID: runID, Token: tok, ExpiresAt: exp.UnixMilli()})
}

// StartHeaders returns the hook (httpstream.Options.StartHeaders) that
// sends a token for the run in StreamTokenHeader on POST /agents/{id}/run,
// POST /pipelines/{id}/run and POST /resume/{checkpointId}, minted for the
// caller when authorizeStream (nil: everyone) allows it that run: the
// starter of a new run always, the resumer of a run when ownership lets it
// watch the run.
func (t *StreamTokens) StartHeaders(authorizeStream core.AuthorizeStreamFunc) func(*http.Request, string, http.Header) {
	return func(r *http.Request, runID string, h http.Header) {
		id := core.IdentityFrom(r.Context())
		if authorizeStream != nil && !authorizeStream(r.Context(), id, runID) {
			return
		}
		tok, _ := t.Mint(id, runID)
		h.Set(StreamTokenHeader, tok)
	}
}
