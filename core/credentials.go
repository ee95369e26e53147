package core

import "context"

// CredentialProvider resolves a named secret. A missing secret is
// ("", ErrCredentialUnavailable-matching error) rather than an empty string,
// so a tool never runs with a blank key by accident.
type CredentialProvider interface {
	Get(ctx context.Context, name string) (string, error)
}

// CredentialFunc adapts a function to CredentialProvider.
type CredentialFunc func(ctx context.Context, name string) (string, error)

// Get implements CredentialProvider.
func (f CredentialFunc) Get(ctx context.Context, name string) (string, error) { return f(ctx, name) }
