package httpstream

import (
	"net/http"
	"testing"
)

func TestNegotiate(t *testing.T) {
	cases := []struct {
		accept []string // nil: no Accept header
		want   string
	}{
		{nil, ContentTypeNDJSON},
		{[]string{""}, ContentTypeNDJSON},
		{[]string{"*/*"}, ContentTypeNDJSON},
		{[]string{"application/x-ndjson"}, ContentTypeNDJSON},
		{[]string{"application/json"}, ContentTypeNDJSON},
		{[]string{"text/event-stream"}, ContentTypeSSE},
		{[]string{"TEXT/Event-Stream; charset=utf-8"}, ContentTypeSSE},
		{[]string{"text/event-stream;q=0"}, ContentTypeNDJSON},
		{[]string{"text/event-stream; q=0.0, */*"}, ContentTypeNDJSON},
		{[]string{"text/event-stream;q=0.5, */*"}, ContentTypeNDJSON},
		{[]string{"text/event-stream, application/x-ndjson"}, ContentTypeNDJSON},
		{[]string{"text/event-stream, application/x-ndjson;q=0.9"}, ContentTypeSSE},
		{[]string{"application/x-ndjson;q=0.5", "text/event-stream"}, ContentTypeSSE},
		{[]string{"text/*"}, ContentTypeSSE},
		{[]string{"text/*;q=0.3, application/*;q=0.2"}, ContentTypeSSE},
		{[]string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, ContentTypeNDJSON},
		{[]string{"text/event-stream;q=bogus"}, ContentTypeNDJSON},
		{[]string{"text/event-stream;q=2"}, ContentTypeNDJSON},
		{[]string{";;;, text/event-stream"}, ContentTypeSSE},
		{[]string{"text/event-stream;q=0, text/*"}, ContentTypeNDJSON}, // the exact range wins over text/*
	}
	for _, c := range cases {
		h := http.Header{}
		for _, v := range c.accept {
			h.Add("Accept", v)
		}
		if got := negotiate(h, NDJSON{}).ContentType(); got != c.want {
			t.Errorf("Accept %q: %s, want %s", c.accept, got, c.want)
		}
	}
}

// TestNegotiateFollowsTheConfiguredFormat: a request that names neither
// format gets the configured transport's (httpsse: SSE), one that names a
// format gets it, and one that refuses the configured format gets the other.
func TestNegotiateFollowsTheConfiguredFormat(t *testing.T) {
	cases := []struct {
		accept []string
		def    Format
		want   string
	}{
		{nil, SSE{}, ContentTypeSSE},
		{[]string{""}, SSE{}, ContentTypeSSE},
		{[]string{"*/*"}, SSE{}, ContentTypeSSE},
		{[]string{"application/json"}, SSE{}, ContentTypeSSE},
		{[]string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, SSE{}, ContentTypeSSE},
		{[]string{"text/event-stream, application/x-ndjson"}, SSE{}, ContentTypeSSE},
		{[]string{"application/x-ndjson"}, SSE{}, ContentTypeNDJSON},
		{[]string{"application/*"}, SSE{}, ContentTypeNDJSON},
		{[]string{"text/event-stream;q=0"}, SSE{}, ContentTypeNDJSON},
		{[]string{"text/event-stream"}, SSE{}, ContentTypeSSE},
		{nil, NDJSON{}, ContentTypeNDJSON},
		{[]string{"*/*"}, NDJSON{}, ContentTypeNDJSON},
		{[]string{"application/x-ndjson;q=0"}, NDJSON{}, ContentTypeSSE},
		{[]string{"text/event-stream"}, NDJSON{}, ContentTypeSSE},
	}
	for _, c := range cases {
		h := http.Header{}
		for _, v := range c.accept {
			h.Add("Accept", v)
		}
		if got := negotiate(h, c.def).ContentType(); got != c.want {
			t.Errorf("Accept %q, configured %s: %s, want %s", c.accept, c.def.ContentType(), got, c.want)
		}
	}
}
