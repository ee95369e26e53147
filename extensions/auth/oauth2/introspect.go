package oauth2

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/extensions/auth/jwt"
)

// introspect checks an opaque token at the RFC 7662 endpoint, through the
// cache.
func (a *Authenticator) introspect(ctx context.Context, endpoint, token string) (*core.AuthIdentity, error) {
	key := sha256.Sum256([]byte(token))
	now := a.opts.Now()
	if e, ok := a.cache.get(key, now); ok {
		return e.id, e.err
	}
	f, leader := a.cache.join(key)
	if leader {
		id, until, err := a.ask(endpoint, token)
		if until.After(now) {
			a.cache.put(key, entry{id: id, err: err, until: until})
		}
		a.cache.finish(key, f, id, err)
	}
	select {
	case <-f.done:
		return f.id, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ask posts the token to the endpoint once, detached from the request (the
// answer serves every waiter). until is how long the answer may be cached:
// zero for a failure to check.
func (a *Authenticator) ask(endpoint, token string) (*core.AuthIdentity, time.Time, error) {
	in := a.opts.Introspection
	ctx, cancel := context.WithTimeout(context.Background(), a.opts.Timeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, time.Time{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 §2.3.1: the credentials are form-encoded before Basic.
	req.SetBasicAuth(url.QueryEscape(in.ClientID), url.QueryEscape(in.ClientSecret))
	res, err := a.client.Do(req)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("oauth2: introspection: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("oauth2: introspection: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, time.Time{}, fmt.Errorf("oauth2: introspection: %s", res.Status)
	}
	claims := map[string]any{}
	if err := json.Unmarshal(body, &claims); err != nil {
		return nil, time.Time{}, fmt.Errorf("oauth2: introspection answer: %w", err)
	}
	until := a.opts.Now().Add(in.CacheTTL)
	if active, _ := claims["active"].(bool); !active {
		return nil, until, jwt.Reject(jwt.ErrorInvalidToken, "the token is not active")
	}
	if iss, ok := claims["iss"].(string); ok && a.opts.Issuer != "" && iss != a.opts.Issuer {
		return nil, until, jwt.Reject(jwt.ErrorInvalidToken, "the token is from another issuer")
	}
	if err := a.checkClaims(claims, false); err != nil {
		return nil, until, err
	}
	if exp, ok, _ := numericDate(claims, "exp"); ok && exp.Add(a.opts.ClockSkew).Before(until) {
		until = exp.Add(a.opts.ClockSkew)
	}
	return a.identity(claims), until, nil
}

// cache is a bounded LRU of introspection answers keyed by the token's
// digest, with the in-flight requests, so concurrent requests with one
// token make one call.
type cache struct {
	mu       sync.Mutex
	size     int
	order    *list.List // of *item, most recent first
	items    map[[32]byte]*list.Element
	inflight map[[32]byte]*flight
}

type entry struct {
	id    *core.AuthIdentity
	err   error
	until time.Time
}

type item struct {
	key [32]byte
	entry
}

type flight struct {
	done chan struct{}
	id   *core.AuthIdentity
	err  error
}

func newCache(size int) *cache {
	return &cache{size: size, order: list.New(), items: map[[32]byte]*list.Element{}, inflight: map[[32]byte]*flight{}}
}

func (c *cache) get(key [32]byte, now time.Time) (entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return entry{}, false
	}
	it := el.Value.(*item)
	if !now.Before(it.until) {
		c.order.Remove(el)
		delete(c.items, key)
		return entry{}, false
	}
	c.order.MoveToFront(el)
	return it.entry, true
}

func (c *cache) put(key [32]byte, e entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		el.Value.(*item).entry = e
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&item{key: key, entry: e})
	for c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*item).key)
	}
}

// Len is the number of cached answers.
func (c *cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// join returns the flight for key, and whether the caller leads it (makes
// the call).
func (c *cache) join(key [32]byte) (*flight, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.inflight[key]; ok {
		return f, false
	}
	f := &flight{done: make(chan struct{})}
	c.inflight[key] = f
	return f, true
}

func (c *cache) finish(key [32]byte, f *flight, id *core.AuthIdentity, err error) {
	c.mu.Lock()
	delete(c.inflight, key)
	c.mu.Unlock()
	f.id, f.err = id, err
	close(f.done)
}
