module github.com/breadai/bread/protocols/agui

go 1.26.0

require github.com/breadai/bread/core v0.0.0

require (
	github.com/ag-ui-protocol/ag-ui/sdks/community/go v0.0.0-20260630145048-7479d97e25f6
	github.com/google/uuid v1.6.0 // indirect
	github.com/sirupsen/logrus v1.9.3 // indirect
	golang.org/x/sys v0.0.0-20220715151400-c0bba94af5f8 // indirect
)

replace (
	github.com/breadai/bread/core => ../../core
	github.com/breadai/bread/engine => ../../engine
	github.com/breadai/bread/server => ../../server
	github.com/breadai/bread/transports/httpstream => ../../transports/httpstream
	github.com/breadai/bread/typed => ../../typed
)
