module github.com/breadai/bread/extensions/auth/oauth2

go 1.26.0

require (
	github.com/breadai/bread/core v0.0.0
	github.com/breadai/bread/extensions/auth/jwt v0.0.0
	github.com/coreos/go-oidc/v3 v3.21.0
	github.com/go-jose/go-jose/v4 v4.1.4
	golang.org/x/oauth2 v0.38.0
)

require github.com/golang-jwt/jwt/v5 v5.3.1

require github.com/google/uuid v1.6.0 // indirect

replace (
	github.com/breadai/bread/core => ../../../core
	github.com/breadai/bread/extensions/auth/jwt => ../jwt
)
