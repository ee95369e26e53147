package core

import (
	"context"
	"os"
	"slices"
)

// CredentialProvider resolves a named secret. A secret the provider does not
// have is an error with code CREDENTIAL_UNAVAILABLE, never an empty string,
// so a tool never runs with a blank key by accident.
type CredentialProvider interface {
	Get(ctx context.Context, name string) (string, error)
}

// CredentialFunc adapts a function to CredentialProvider.
type CredentialFunc func(ctx context.Context, name string) (string, error)

// Get implements CredentialProvider.
func (f CredentialFunc) Get(ctx context.Context, name string) (string, error) { return f(ctx, name) }

// EnvCredentials reads secrets from the process environment. It is the
// fallback when neither a tool nor Config sets a provider.
func EnvCredentials() CredentialProvider { return envCredentials{lookup: os.LookupEnv} }

type envCredentials struct {
	lookup func(string) (string, bool)
}

func (e envCredentials) Get(_ context.Context, name string) (string, error) {
	if v, ok := e.lookup(name); ok {
		return v, nil
	}
	return "", credentialUnavailable(name, "it is not set in the environment")
}

func credentialUnavailable(name, why string) *BreadError {
	return &BreadError{
		Code:    CodeCredentialUnavailable,
		Message: "credential " + quoteTruncated(name) + " is unavailable: " + why,
		Context: map[string]any{"name": name},
	}
}

// ScopedCredentials limits base to the names a tool declared. Reading any
// other name is CREDENTIAL_NOT_DECLARED, even if base has it; a tool that
// declares nothing gets nothing.
func ScopedCredentials(base CredentialProvider, allowed []string) CredentialProvider {
	return scopedCredentials{base: base, allowed: slices.Clone(allowed)}
}

type scopedCredentials struct {
	base    CredentialProvider
	allowed []string
}

func (s scopedCredentials) Get(ctx context.Context, name string) (string, error) {
	if !slices.Contains(s.allowed, name) {
		return "", &BreadError{
			Code:    CodeCredentialNotDeclared,
			Message: "credential " + quoteTruncated(name) + " is not declared in this tool's Credentials",
			Context: map[string]any{"name": name, "allowed": slices.Clone(s.allowed)},
		}
	}
	return s.base.Get(ctx, name)
}
