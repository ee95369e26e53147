module github.com/breadai/bread/extensions/auth/jwt

go 1.26.0

require (
	github.com/breadai/bread/core v0.0.0
	github.com/golang-jwt/jwt/v5 v5.3.1
)

require github.com/google/uuid v1.6.0 // indirect

replace github.com/breadai/bread/core => ../../../core
