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
	// Root is the directory core_doc_load may read files from.
	Root string `json:"root,omitempty"`
	// MaxBytes caps what core_doc_load reads (default 1 MiB).
	MaxBytes int64 `json:"maxBytes,omitempty"`
	// HTTPClient fetches URLs (default: 30s timeout).
	HTTPClient *http.Client `json:"-"`
}
