package remoteagent

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

// Format is the stream format a Client asks for.
type Format int

const (
	// NDJSON asks for application/x-ndjson.
	NDJSON Format = iota
	// SSE asks for text/event-stream.
	SSE
)

// String is the format's media type.
func (f Format) String() string {
	if f == SSE {
		return httpstream.ContentTypeSSE
	}
	return httpstream.ContentTypeNDJSON
}

// Defaults of Options.
const (
	DefaultMaxRetries    = 5
	DefaultRetryDelay    = 500 * time.Millisecond
	DefaultMaxFrameBytes = 16 << 20
	maxRetryDelay        = 30 * time.Second
	// cancelTimeout bounds the POST /runs/{runId}/cancel sent when the
	// caller gives up on a run: the caller is waiting for it.
	cancelTimeout = 5 * time.Second
)

// Options locate and authenticate a remote bread, pick the format and
// bound the reconnects.
type Options struct {
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
	// Format is the stream format asked for (NDJSON, the zero value, or SSE).
	Format Format
	// MaxRetries bounds the reconnects in a row that deliver nothing new
	// (default 5). Negative disables reconnecting: the run is then not
	// detached, and a dropped connection ends it on the remote too.
	MaxRetries int
	// RetryDelay is the wait before the first reconnect, doubled after each
	// one that brought nothing, up to 30 s (default 500 ms).
	RetryDelay time.Duration
	// MaxFrameBytes bounds one NDJSON line or SSE event (default 16 MiB).
	MaxFrameBytes int
	// Logger receives a warning when cancelling an abandoned remote run
	// fails; nil logs nothing.
	Logger *slog.Logger
}

// Client runs agents on another bread over its streaming routes.
type Client struct {
	ep         httpstream.Endpoint
	format     Format
	reconnect  bool
	maxRetries int
	retryDelay time.Duration
	maxFrame   int
	log        *slog.Logger
}

var _ core.RemoteAgent = (*Client)(nil)

// New returns a Client for the bread at opts.URL.
func New(opts Options) *Client {
	c := &Client{
		format:     opts.Format,
		reconnect:  opts.MaxRetries >= 0,
		maxRetries: opts.MaxRetries,
		retryDelay: opts.RetryDelay,
		maxFrame:   opts.MaxFrameBytes,
		log:        opts.Logger,
	}
	c.ep = httpstream.Endpoint{URL: opts.URL, Headers: opts.Headers, Signer: opts.Signer, Client: opts.HTTPClient, Accept: c.format.String(), Detach: c.reconnect}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.retryDelay <= 0 {
		c.retryDelay = DefaultRetryDelay
	}
	if c.maxFrame <= 0 {
		c.maxFrame = DefaultMaxFrameBytes
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}
