package server

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/breadai/bread/core"
)

// AuthPluginName is the name that turns auth on when a plugin carries it.
const AuthPluginName = "auth"

// AuthMiddleware authenticates every request with the first strategy that
// returns an identity, stores that identity in the request's context
// (core.IdentityFrom reads it) and passes the request on. When no strategy
// authenticates it answers 401 UNAUTHORIZED; when a strategy failed to
// check (an error, not a rejection) and none authenticated, 500.
func AuthMiddleware(strategies ...core.BreadAuthStrategy) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var errs []error
			for _, s := range strategies {
				id, err := s.Authenticate(r)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if id != nil {
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
			writeError(w, http.StatusUnauthorized, core.CodeUnauthorized, "Unauthorized")
		})
	}
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
