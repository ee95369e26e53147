package otel

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Middleware continues the caller's trace: it extracts W3C trace context
// from the request, serves it under a server span (so the runs it starts
// are that span's children), and counts open crumb streams. The server
// installs it for every route (core.MiddlewareProvider).
func (p *Plugin) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := p.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		start := time.Now()
		ctx, span := p.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
			attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path)))
		sw := &statusWriter{ResponseWriter: w, p: p, r: r.WithContext(ctx)}
		defer func() {
			if sw.streaming {
				p.m.streams.Add(ctx, -1)
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if status >= 500 {
				span.SetStatus(codes.Error, strconv.Itoa(status))
			}
			span.End()
			p.m.serverTime.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(
				attribute.String("http.request.method", r.Method), attribute.Int("http.response.status_code", status)))
		}()
		next.ServeHTTP(sw, sw.r)
	})
}

// statusWriter records the status and notices crumb streams. It keeps the
// writer's Flush reachable (directly and through Unwrap, which
// http.ResponseController uses).
type statusWriter struct {
	http.ResponseWriter
	p         *Plugin
	r         *http.Request
	status    int
	streaming bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		ct := w.Header().Get("Content-Type")
		if code < 300 && (strings.HasPrefix(ct, "application/x-ndjson") || strings.HasPrefix(ct, "text/event-stream")) {
			w.streaming = true
			w.p.m.streams.Add(w.r.Context(), 1)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Transport returns a RoundTripper that sends each request under a client
// span, a child of the span in the request's context, with that span's
// W3C trace context in its headers. The span lasts until the response body
// is closed, so a streamed remote run is timed whole. base nil is
// http.DefaultTransport.
func (p *Plugin) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{p: p, base: base}
}

type transport struct {
	p    *Plugin
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	attrs := []attribute.KeyValue{attribute.String("http.request.method", req.Method), attribute.String("url.path", req.URL.Path)}
	if host, port, err := net.SplitHostPort(req.URL.Host); err == nil {
		attrs = append(attrs, attribute.String("server.address", host))
		if n, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attribute.Int("server.port", n))
		}
	} else if req.URL.Host != "" {
		attrs = append(attrs, attribute.String("server.address", req.URL.Host))
	}
	ctx, span := t.p.tracer.Start(req.Context(), req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	out := req.Clone(ctx)
	t.p.prop.Inject(ctx, propagation.HeaderCarrier(out.Header))
	resp, err := t.base.RoundTrip(out)
	if err != nil {
		span.SetStatus(codes.Error, "request failed")
		span.SetAttributes(attribute.String("error.type", "transport"))
		span.End()
		return resp, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetStatus(codes.Error, strconv.Itoa(resp.StatusCode))
	}
	if resp.Body == nil || resp.Body == http.NoBody {
		span.End()
		return resp, nil
	}
	resp.Body = &spanBody{ReadCloser: resp.Body, span: span}
	return resp, nil
}

// spanBody ends the client span when the body is read to its end or
// closed.
type spanBody struct {
	io.ReadCloser
	span trace.Span
	once sync.Once
}

func (b *spanBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(func() { b.span.End() })
	}
	return n, err
}

func (b *spanBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.span.End() })
	return err
}
