module github.com/breadai/bread/server

go 1.26.0

require github.com/gorilla/mux v1.8.1

require github.com/google/uuid v1.6.0

require (
	github.com/breadai/bread/core v0.0.0
	github.com/breadai/bread/transports/httpstream v0.0.0
	golang.org/x/net v0.60.0
)

replace (
	github.com/breadai/bread/core => ../core
	github.com/breadai/bread/transports/httpstream => ../transports/httpstream
)
