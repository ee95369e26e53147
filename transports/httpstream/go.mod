module github.com/breadai/bread/transports/httpstream

go 1.26.0

require github.com/breadai/bread/core v0.0.0

replace github.com/breadai/bread/core => ../../core
