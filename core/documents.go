package core

import (
	"net/http"
)

// DocumentConfig turns on an agent's document tools: core_doc_ingest,
// core_doc_search, core_doc_read and core_doc_load.
//
// core_doc_load fetches http(s) URLs, and reads local files only under Root:
// with Root empty, file paths are refused, so a model cannot read the
// server's file system.
type DocumentConfig struct {
	// Root is the directory core_doc_load may read files from; empty
	// refuses file paths.
	Root string `json:"root,omitempty"`
	// MaxBytes caps what core_doc_load reads (default 1 MiB).
	MaxBytes int64 `json:"maxBytes,omitempty"`
	// AllowHosts turns on fetching http(s) URLs, for these hosts only: an
	// exact name ("docs.example.com"), a subdomain wildcard
	// ("*.example.com") or "*" for any host. Empty (the default) refuses
	// every URL: the model chooses what to load, and a prompt-injected model
	// must not reach internal services.
	AllowHosts []string `json:"allowHosts,omitempty"`
	// AllowPrivateNetworks lets fetches reach loopback, private, link-local
	// and other non-public addresses (169.254.169.254, 10.0.0.0/8, ...),
	// which are refused by default after DNS resolution and on every
	// redirect hop. Set it only when every allowed host is yours.
	AllowPrivateNetworks bool `json:"allowPrivateNetworks,omitempty"`
	// HTTPClient, when set, fetches URLs instead of the engine's guarded
	// client (30 s timeout, no proxy, address checks at dial time). The
	// host allow-list still applies to the first request; address checks
	// and redirects are then the client's responsibility.
	HTTPClient *http.Client `json:"-"`
}
