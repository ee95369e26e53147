package httpchunked

import (
	"context"
	"errors"
	"iter"
	"net/http"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

// RemoteOptions locate and authenticate a remote bread.
type RemoteOptions struct {
	// URL is the remote server's base URL, for example http://research:3000.
	URL string
	// Headers are sent with every request, before Signer runs.
	Headers http.Header
	// Signer signs every request.
	Signer core.BreadSigner
	// HTTPClient sends the requests; nil is http.DefaultClient. Give it no
	// Timeout: a run streams for as long as it runs. Cancel through the
	// run's context instead.
	HTTPClient *http.Client
	// MaxLineBytes bounds one line (default 16 MiB).
	MaxLineBytes int
}

// Remote runs agents on another bread over its chunked NDJSON routes.
type Remote struct {
	ep      httpstream.Endpoint
	maxLine int
}

var _ core.RemoteAgent = (*Remote)(nil)

// RemoteAgent returns a core.RemoteAgent for the bread at opts.URL.
func RemoteAgent(opts RemoteOptions) *Remote {
	r := &Remote{
		ep:      httpstream.Endpoint{URL: opts.URL, Headers: opts.Headers, Signer: opts.Signer, Client: opts.HTTPClient, Accept: httpstream.ContentTypeNDJSON},
		maxLine: opts.MaxLineBytes,
	}
	if r.maxLine <= 0 {
		r.maxLine = DefaultMaxLineBytes
	}
	return r
}

// Run posts the run and yields the remote crumbs as they arrive. A terminal
// agent:error is yielded paired with its error. A refused request or a
// failed connection is REMOTE_AGENT_ERROR, a malformed line
// PROTOCOL_DECODE_ERROR, a cancelled ctx RUN_CANCELLED. This reader does not
// reconnect: a stream that drops simply ends (transports/httpsse's remote
// agent does reconnect).
func (r *Remote) Run(ctx context.Context, agentID string, input any, opts core.RunOptions) iter.Seq2[core.Crumb, error] {
	return func(yield func(core.Crumb, error) bool) {
		res, err := r.ep.StartRun(ctx, agentID, input, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		defer res.Body.Close()
		stopped := false
		err = readFrames(res.Body, r.maxLine, func(f core.Frame) bool {
			cerr := httpstream.CrumbError(f.Crumb)
			if !yield(f.Crumb, cerr) {
				stopped = true
				return false
			}
			if core.EndsCall(f.Crumb) {
				stopped = true
				return false
			}
			return true
		})
		if stopped || err == nil {
			return
		}
		var be *core.BreadError
		if errors.As(err, &be) && be.Code == core.CodeProtocolDecodeError {
			yield(nil, err)
			return
		}
		yield(nil, httpstream.TransportError(ctx, r.ep.URL, err))
	}
}
