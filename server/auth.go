package server

import (
	"errors"
	"log/slog"
	"net/http"
	"slices"

	"github.com/breadai/bread/core"
)

// AuthPluginName is the name that turns auth on when a plugin carries it.
const AuthPluginName = "auth"

// DefaultChallenge is the WWW-Authenticate value of a 401 when no strategy
// names a challenge of its own: RFC 9110 requires one.
const DefaultChallenge = `Bearer realm="bread"`

// Challenger is implemented by a strategy that names its scheme in a 401's
// WWW-Authenticate header. rejection is nil when the request carried no
// credential the strategy recognised (the challenge invites one); it is
// the strategy's own rejection otherwise (RFC 6750 puts the cause in
// error= and error_description=).
type Challenger interface {
	Challenge(rejection error) string
}

// Scrubber is implemented by a strategy that must see every request before
// any strategy runs, whichever authenticates it: the trusted-proxy strategy
// strips its identity headers from peers it does not trust, so no later
// handler can read a forged one.
type Scrubber interface {
	Scrub(r *http.Request)
}

// IsRejection reports whether err, returned by a strategy's Authenticate,
// is a rejection (a core.BreadError with code UNAUTHORIZED: the request
// carried this strategy's kind of credential and it is not valid) rather
// than a failure to check.
func IsRejection(err error) bool {
	return errors.Is(err, &core.BreadError{Code: core.CodeUnauthorized})
}

// AuthMiddleware composes strategies, tried in order, and stores the
// identity of the first that authenticates in the request's context
// (core.IdentityFrom reads it). For each strategy, Authenticate's answer
// decides:
//
//   - an identity: the request goes on, no later strategy runs;
//   - nil, nil: not this strategy's credential, the next one tries;
//   - a rejection (IsRejection): 401 at once, no later strategy runs, with
//     that strategy's challenge;
//   - another error: a failure to check (a key server down); the next
//     strategy tries, and when none authenticates the answer is 500.
//
// When no strategy authenticates or rejects, the 401 carries the challenge
// of every Challenger, in order (DefaultChallenge when there is none).
// Before the first strategy runs, every Scrubber sees the request.
func AuthMiddleware(strategies ...core.BreadAuthStrategy) func(http.Handler) http.Handler {
	var scrubbers []Scrubber
	var challenges []string
	for _, s := range strategies {
		if sc, ok := s.(Scrubber); ok {
			scrubbers = append(scrubbers, sc)
		}
		if c, ok := s.(Challenger); ok {
			if v := c.Challenge(nil); v != "" && !slices.Contains(challenges, v) {
				challenges = append(challenges, v)
			}
		}
	}
	if len(challenges) == 0 {
		challenges = []string{DefaultChallenge}
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for _, sc := range scrubbers {
				sc.Scrub(r)
			}
			var errs []error
			for _, s := range strategies {
				id, err := s.Authenticate(r)
				switch {
				case err != nil && IsRejection(err):
					slog.Default().DebugContext(r.Context(), "bread: auth strategy rejected a request", "strategy", s.Name(), "reason", err)
					challenge := DefaultChallenge
					if c, ok := s.(Challenger); ok {
						if v := c.Challenge(err); v != "" {
							challenge = v
						}
					}
					unauthorized(w, challenge)
					return
				case err != nil:
					errs = append(errs, err)
				case id != nil:
					next.ServeHTTP(w, r.WithContext(core.WithIdentity(r.Context(), id)))
					return
				}
			}
			if len(errs) > 0 {
				err := errors.Join(errs...)
				slog.Default().ErrorContext(r.Context(), "bread: an auth strategy failed to check a request", "error", err)
				writeJSON(w, http.StatusInternalServerError, errorBody{Error: core.ClientError{Code: core.CodeInternalError, Message: "authentication could not be checked"}})
				return
			}
			unauthorized(w, challenges...)
		})
	}
}

// unauthorized answers 401 UNAUTHORIZED with one WWW-Authenticate field per
// challenge.
func unauthorized(w http.ResponseWriter, challenges ...string) {
	for _, c := range challenges {
		w.Header().Add("WWW-Authenticate", c)
	}
	writeError(w, http.StatusUnauthorized, core.CodeUnauthorized, "Unauthorized")
}

// AuthPlugin turns strategies into a core.BreadPlugin named "auth" for
// engine.Config.Plugins, the way configuration files wire auth. Its presence
// turns the server's auth on: pair it with Options.Auth.Authorize.
func AuthPlugin(strategies ...core.BreadAuthStrategy) core.BreadPlugin {
	return authPlugin{mw: AuthMiddleware(strategies...)}
}

type authPlugin struct {
	mw func(http.Handler) http.Handler
}

func (authPlugin) Name() string                                { return AuthPluginName }
func (p authPlugin) Middleware(next http.Handler) http.Handler { return p.mw(next) }
