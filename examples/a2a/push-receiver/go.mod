module github.com/breadai/bread/examples/a2a/push-receiver

go 1.26.0

require github.com/breadai/bread/engine v0.0.0

require (
	github.com/breadai/bread/core v0.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
)

replace (
	github.com/breadai/bread/core => ../../../core
	github.com/breadai/bread/engine => ../../../engine
	github.com/breadai/bread/typed => ../../../typed
)
