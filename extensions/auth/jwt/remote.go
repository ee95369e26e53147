package jwt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// JWKS fetch defaults.
const (
	DefaultJWKSRefresh    = 15 * time.Minute
	DefaultJWKSMinRefetch = 30 * time.Second
	DefaultJWKSTimeout    = 5 * time.Second
	DefaultJWKSMaxBytes   = 1 << 20
)

// JWKSOptions tune a RemoteJWKS.
type JWKSOptions struct {
	// Client fetches the set (default: a client with no cookie jar that
	// follows no redirect to another scheme).
	Client *http.Client
	// Refresh is how long a fetched set is used before it is fetched again
	// (default 15m). A failed refresh keeps the old set.
	Refresh time.Duration
	// MinRefetch is the least time between two fetches (default 30s): a
	// token naming an unknown kid refetches the set at most this often, so
	// a stream of forged kids cannot hammer the issuer.
	MinRefetch time.Duration
	// Timeout bounds one fetch (default 5s).
	Timeout time.Duration
	// MaxBytes bounds the set's size (default 1 MiB).
	MaxBytes int64
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time
}

// RemoteJWKS is a KeySource reading a JSON Web Key Set over HTTP. It is safe
// for concurrent use: one fetch runs at a time and concurrent callers share
// its result.
type RemoteJWKS struct {
	url  string
	opts JWKSOptions

	mu        sync.Mutex
	keys      StaticKeys
	fetched   time.Time // last successful fetch
	attempted time.Time // last fetch started
	lastErr   error
	inflight  chan struct{}
	fetches   int
}

// NewRemoteJWKS returns a key source for the set at rawURL (http or https).
// It fetches nothing until the first token arrives.
func NewRemoteJWKS(rawURL string, opts JWKSOptions) (*RemoteJWKS, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("jwt: JWKS URL %q is not an http(s) URL", rawURL)
	}
	if opts.Refresh < 0 || opts.MinRefetch < 0 || opts.Timeout < 0 || opts.MaxBytes < 0 {
		return nil, errors.New("jwt: JWKS durations and sizes cannot be negative")
	}
	if opts.Refresh == 0 {
		opts.Refresh = DefaultJWKSRefresh
	}
	if opts.MinRefetch == 0 {
		opts.MinRefetch = DefaultJWKSMinRefetch
	}
	if opts.MinRefetch > opts.Refresh {
		opts.MinRefetch = opts.Refresh
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultJWKSTimeout
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultJWKSMaxBytes
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &RemoteJWKS{url: u.String(), opts: opts}, nil
}

// URL is the set's address.
func (s *RemoteJWKS) URL() string { return s.url }

// Fetches counts the fetches started, for tests and metrics.
func (s *RemoteJWKS) Fetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

// Keys implements KeySource. The set is fetched when it has never been,
// when it is older than Refresh (in the background: callers use the old
// set meanwhile) and when kid names no key it holds; never twice within
// MinRefetch.
func (s *RemoteJWKS) Keys(ctx context.Context, kid string) ([]Key, error) {
	s.mu.Lock()
	now := s.opts.Now()
	stale := s.fetched.IsZero() || now.Sub(s.fetched) >= s.opts.Refresh
	missing := kid != "" && len(pick(s.keys, kid)) == 0
	mayFetch := s.attempted.IsZero() || now.Sub(s.attempted) >= s.opts.MinRefetch
	// A caller with keys to use goes on with them while a stale set
	// refreshes; one without (no set yet, an unknown kid) waits.
	wait := s.fetched.IsZero() || missing
	var done <-chan struct{}
	switch {
	case (stale || missing) && mayFetch:
		done = s.startFetch(now)
	case s.inflight != nil:
		done = s.inflight
	}
	if done != nil && wait {
		s.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	if s.fetched.IsZero() {
		return nil, fmt.Errorf("%w: %v", ErrKeysUnavailable, s.lastErr)
	}
	return pick(s.keys, kid), nil
}

// startFetch starts a fetch unless one runs, and returns the channel closed
// when it ends. s.mu is held.
func (s *RemoteJWKS) startFetch(now time.Time) <-chan struct{} {
	if s.inflight != nil {
		return s.inflight
	}
	done := make(chan struct{})
	s.inflight, s.attempted = done, now
	s.fetches++
	go func() {
		keys, err := s.fetch()
		s.mu.Lock()
		if err == nil {
			s.keys, s.fetched, s.lastErr = keys, s.opts.Now(), nil
		} else {
			s.lastErr = err
		}
		s.inflight = nil
		s.mu.Unlock()
		close(done)
	}()
	return done
}

// fetch reads the set once, detached from any request: a caller that goes
// away does not waste the fetch for the others.
func (s *RemoteJWKS) fetch() (StaticKeys, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	res, err := s.opts.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jwt: fetching %s: %w", s.url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwt: fetching %s: %s", s.url, res.Status)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, s.opts.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("jwt: fetching %s: %w", s.url, err)
	}
	if int64(len(body)) > s.opts.MaxBytes {
		return nil, fmt.Errorf("jwt: %s: the key set is larger than %d bytes", s.url, s.opts.MaxBytes)
	}
	return ParseJWKS(body)
}
