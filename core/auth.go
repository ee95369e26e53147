package core

import (
	"context"
	"net/http"
)

// AuthIdentity is an authenticated caller.
type AuthIdentity struct {
	Subject string         `json:"subject"`
	Claims  map[string]any `json:"claims,omitempty"`
}

// BreadAuthStrategy authenticates incoming requests on the server side. It
// returns (nil, nil) when the request does not carry its kind of credential,
// so the next strategy can try; an error is a failure to check, not a
// rejection.
type BreadAuthStrategy interface {
	Name() string
	Authenticate(r *http.Request) (*AuthIdentity, error)
}

// BreadSigner attaches credentials to an outgoing request on the client side
// (a remote agent calling another bread).
type BreadSigner interface {
	Sign(ctx context.Context, h http.Header) error
}

// AuthorizeFunc decides whether identity may perform action. args are the
// route's path parameters and query parameters, a path parameter winning over
// a query parameter of the same name. identity is nil when no strategy ran.
type AuthorizeFunc func(ctx context.Context, identity *AuthIdentity, action string, args map[string]string) bool

// AuthorizeStreamFunc decides whether identity may read a run's crumbs; it
// runs after the action grant on the routes that expose a run.
type AuthorizeStreamFunc func(ctx context.Context, identity *AuthIdentity, runID string) bool
