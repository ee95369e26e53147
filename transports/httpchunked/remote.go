package httpchunked

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream/remoteagent"
)

// DefaultMaxLineBytes bounds one NDJSON line (one crumb).
const DefaultMaxLineBytes = remoteagent.DefaultMaxFrameBytes

// RemoteOptions locate and authenticate a remote bread and bound the
// reconnects: remoteagent.Options with the format fixed to NDJSON.
type RemoteOptions struct {
	// URL is the remote server's base URL, for example http://research:3000.
	URL string
	// Headers are sent with every request, before Signer runs.
	Headers http.Header
	// Signer signs every request, reconnects and cancels included.
	Signer core.BreadSigner
	// HTTPClient sends the requests; nil is http.DefaultClient. Give it no
	// Timeout: a run streams for as long as it runs. Cancel through the
	// run's context instead.
	HTTPClient *http.Client
	// MaxLineBytes bounds one line (default 16 MiB).
	MaxLineBytes int
	// MaxRetries bounds the reconnects in a row that deliver nothing new
	// (default 5; negative disables reconnecting, see remoteagent.Options).
	MaxRetries int
	// RetryDelay is the wait before the first reconnect (default 500 ms).
	RetryDelay time.Duration
	// Logger receives a warning when cancelling an abandoned remote run
	// fails; nil logs nothing.
	Logger *slog.Logger
}

// Remote runs agents on another bread over its NDJSON routes.
type Remote = remoteagent.Client

// RemoteAgent returns a core.RemoteAgent for the bread at opts.URL that
// asks for NDJSON: remoteagent.New with Format NDJSON.
func RemoteAgent(opts RemoteOptions) *Remote {
	return remoteagent.New(remoteagent.Options{
		URL: opts.URL, Headers: opts.Headers, Signer: opts.Signer, HTTPClient: opts.HTTPClient,
		Format: remoteagent.NDJSON, MaxRetries: opts.MaxRetries, RetryDelay: opts.RetryDelay,
		MaxFrameBytes: opts.MaxLineBytes, Logger: opts.Logger,
	})
}
