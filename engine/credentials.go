package engine

import "github.com/breadai/bread/core"

// toolCredentials is the provider a tool's context gets: the tool's own
// provider, else Config.Credentials, else the environment, scoped to what the
// tool declared.
func (in *Instance) toolCredentials(t *core.Tool) core.CredentialProvider {
	base := t.CredentialProvider
	if base == nil {
		base = in.cfg.Credentials
	}
	if base == nil {
		base = core.EnvCredentials()
	}
	return core.ScopedCredentials(base, t.Credentials)
}
