package httpchunked

import "github.com/breadai/bread/transports/httpstream"

// Options configure the transport; see httpstream.Options.
type Options = httpstream.Options

// Transport is a duplex core.BreadTransport that mounts the NDJSON routes.
// Publish and Subscribe go to Options.Bus (the in-process core/stream by
// default).
type Transport struct {
	*httpstream.Ingress
}

// New returns a chunked NDJSON transport.
func New(opts Options) *Transport {
	return &Transport{Ingress: httpstream.New(ndjson{}, opts)}
}
