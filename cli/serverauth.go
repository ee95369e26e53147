package cli

import (
	"net/http"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
)

// serverAuth is server.auth wired for serving: the strategies, behind the
// stream-token strategy; the allow lists' grant, wrapped by the stream
// tokens' and run ownership's checks; ownership as the streams' policy.
type serverAuth struct {
	strategies      []core.BreadAuthStrategy
	authorize       core.AuthorizeFunc
	authorizeStream core.AuthorizeStreamFunc
	startHeaders    func(*http.Request, string, http.Header)
}

// serverAuth builds server.auth, or nil when bread.yaml configures none
// (no auth: every caller on loopback owns every run). It adds the stream
// tokens' plugin (POST /runs/{runId}/stream-token) to c.Plugins: call it before engine.New.
func (a *app) serverAuth(cs []*project.Component, c *engine.Config) (*serverAuth, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	setup, err := a.authStrategies(cs)
	if err != nil {
		return nil, err
	}
	authorize := setup.authorize
	if a.opts.Authorize != nil {
		authorize = a.opts.Authorize
	}
	tokens, err := a.streamTokens()
	if err != nil {
		return nil, err
	}
	own := &server.Ownership{Store: c.Store, Admin: setup.admin, Logger: a.log,
		Resume: !a.project.Config.Server.Ownership.ResumeOff, Sessions: !a.project.Config.Server.Ownership.SessionsOff}
	c.Plugins = append(c.Plugins, tokens.Plugin(c.Store, own.AuthorizeStream))
	for _, p := range c.Plugins {
		if u, ok := p.(ownershipUser); ok {
			u.UseOwnership(own.AuthorizeStream)
		}
	}
	return &serverAuth{
		strategies:      append([]core.BreadAuthStrategy{tokens.Strategy()}, setup.strategies...),
		authorize:       tokens.Authorize(own.Authorize(authorize)),
		authorizeStream: own.AuthorizeStream,
		startHeaders:    tokens.StartHeaders(own.AuthorizeStream),
	}, nil
}

// apply sets the server options.
func (sa *serverAuth) apply(so *server.Options) {
	if sa == nil {
		return
	}
	so.Auth = &server.Auth{Strategies: sa.strategies, Authorize: sa.authorize}
	so.Streams.AuthorizeStream = sa.authorizeStream
	so.Streams.StartHeaders = sa.startHeaders
}

// streamTokens builds server.streamTokens: its key (at least 32 bytes;
// none generates one for this process) and TTL.
func (a *app) streamTokens() (*server.StreamTokens, error) {
	st := a.project.Config.Server.StreamTokens
	tokens, err := server.NewStreamTokens([]byte(st.Key), st.TTL)
	if err != nil {
		return nil, &project.Error{File: "bread.yaml", Err: core.AsBreadError(err, core.CodeInvalidConfig)}
	}
	return tokens, nil
}
