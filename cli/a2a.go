package cli

import (
	"context"
	"net/http"

	"github.com/breadai/bread/cli/project"
	"github.com/breadai/bread/core"
	"github.com/breadai/bread/protocols/a2a"
)

// a2aPluginTypes is the bread.yaml plugin type of protocols/a2a: one agent
// as an A2A endpoint (its Agent Card and JSON-RPC route). With a Redis bus
// the cluster coordinator cancels its tasks on whichever replica runs them.
func (a *app) a2aPluginTypes() map[string]PluginFactory {
	return map[string]PluginFactory{
		"a2a": func(_ context.Context, c *project.Component, _ *project.Project) (core.BreadPlugin, error) {
			var o a2a.Options
			if err := decode(c, &o); err != nil {
				return nil, err
			}
			if a.coordinator != nil {
				o.Canceller = a.coordinator
			}
			pl, err := a2a.New(o)
			if err != nil {
				return nil, located(c, err)
			}
			return pl, nil
		},
	}
}

// a2aRemoteAgent is a `remoteAgents` entry of type a2a: an A2A agent (its
// base URL or its Agent Card's URL) that the local id delegates to.
func (a *app) a2aRemoteAgent(c *project.Component, url string, h http.Header, signer core.BreadSigner) (core.RemoteAgent, error) {
	r, err := a2a.NewRemote(a2a.RemoteOptions{URL: url, Headers: h, Signer: signer, HTTPClient: a.remoteHTTPClient()})
	if err != nil {
		return nil, located(c, err)
	}
	return r, nil
}

// ownershipUser is a plugin whose routes expose runs under names of their
// own (protocols/a2a's tasks): serverAuth hands it the run-ownership
// policy, so its callers see the runs they may see on bread's own routes.
type ownershipUser interface {
	UseOwnership(core.AuthorizeStreamFunc)
}
