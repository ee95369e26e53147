package engine

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine/internal/netguard"
	"github.com/breadai/bread/typed"
)

type docIngestArgs struct {
	Title   string `json:"title" validate:"required"`
	Content string `json:"content" validate:"required"`
	Source  string `json:"source,omitempty"`
}

type docSearchArgs struct {
	Query string `json:"query" validate:"required"`
	Limit int    `json:"limit,omitempty" validate:"omitempty,min=1,max=20"`
}

type docReadArgs struct {
	ID string `json:"id" validate:"required"`
}

type docLoadArgs struct {
	Source string `json:"source" validate:"required" jsonschema:"description=An http(s) URL or a file path under the configured root"`
	Title  string `json:"title,omitempty"`
}

// documentTools are the core_doc_* tools over ds, scoped to one agent.
func documentTools(ds core.DocumentStore, agentID string, cfg core.DocumentConfig) []core.Tool {
	return []core.Tool{
		typed.DefineTool("doc_ingest", "Store a document in the document store", func(ctx context.Context, a docIngestArgs, _ core.ToolContext) (core.DocumentRecord, error) {
			return ds.IngestDocument(ctx, core.NewDocument{AgentID: agentID, Title: a.Title, Content: a.Content, Source: a.Source})
		}),
		typed.DefineTool("doc_search", "Search documents by keyword", func(ctx context.Context, a docSearchArgs, _ core.ToolContext) ([]core.DocumentRecord, error) {
			return ds.SearchDocuments(ctx, core.DocumentQuery{AgentID: agentID, Query: a.Query, Limit: a.Limit})
		}),
		typed.DefineTool("doc_read", "Read the full content of a document by id", func(ctx context.Context, a docReadArgs, _ core.ToolContext) (core.Document, error) {
			return ds.ReadDocument(ctx, agentID, a.ID)
		}),
		typed.DefineTool("doc_load", "Load a document from a URL or file path and ingest it", func(ctx context.Context, a docLoadArgs, _ core.ToolContext) (map[string]any, error) {
			content, err := loadDocument(ctx, cfg, a.Source)
			if err != nil {
				return nil, err
			}
			rec, err := ds.IngestDocument(ctx, core.NewDocument{AgentID: agentID, Title: cmpOr(a.Title, a.Source), Content: content, Source: a.Source})
			if err != nil {
				return nil, err
			}
			return map[string]any{"id": rec.ID, "title": rec.Title, "length": len(content)}, nil
		}),
	}
}

func loadDocument(ctx context.Context, cfg core.DocumentConfig, source string) (string, error) {
	max := cfg.MaxBytes
	if max <= 0 {
		max = 1 << 20
	}
	var r io.Reader
	if strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://") {
		policy := netguard.Policy{AllowHosts: cfg.AllowHosts, AllowPrivateNetworks: cfg.AllowPrivateNetworks}
		if len(policy.AllowHosts) == 0 {
			return "", core.Errorf(core.CodeValidationError, "URLs are not allowed: this agent's documents allow no hosts (documents.allowHosts)")
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
		if err != nil {
			return "", core.Errorf(core.CodeValidationError, "invalid URL %s", quoteTruncated(source))
		}
		if err := policy.Check(ctx, req.URL.Scheme, req.URL.Hostname()); err != nil {
			return "", core.Errorf(core.CodeValidationError, "%s may not be fetched: %s is not in documents.allowHosts", quoteTruncated(source), quoteTruncated(req.URL.Hostname()))
		}
		client := cfg.HTTPClient
		if client == nil {
			client = netguard.Client(policy, 30*time.Second)
		}
		resp, err := client.Do(req)
		if err != nil {
			switch {
			case errors.Is(err, netguard.ErrBlockedAddress):
				return "", core.Errorf(core.CodeValidationError, "%s may not be fetched: it leads to a loopback, private or link-local address", quoteTruncated(source))
			case errors.Is(err, netguard.ErrHostNotAllowed):
				return "", core.Errorf(core.CodeValidationError, "%s may not be fetched: it redirects to a host outside documents.allowHosts", quoteTruncated(source))
			}
			return "", core.Errorf(core.CodeToolError, "fetching %s failed", quoteTruncated(source))
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return "", core.Errorf(core.CodeToolError, "fetching %s failed: HTTP %d", source, resp.StatusCode)
		}
		r = resp.Body
	} else {
		path, err := underRoot(cfg.Root, source)
		if err != nil {
			return "", err
		}
		f, err := os.Open(path)
		if err != nil {
			return "", core.Errorf(core.CodeToolError, "cannot read %s: %w", source, errors.Unwrap(err))
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return "", core.Errorf(core.CodeToolError, "reading %s failed: %w", source, err)
	}
	if int64(len(b)) > max {
		return "", core.Errorf(core.CodeValidationError, "%s is larger than %d bytes", source, max)
	}
	return string(b), nil
}

// underRoot resolves a path inside root, refusing anything that escapes it
// (absolute paths elsewhere, "..", symlinks pointing out).
func underRoot(root, p string) (string, error) {
	if root == "" {
		return "", core.Errorf(core.CodeValidationError, "file paths are not allowed: this agent's documents have no root directory")
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	if realRoot, err := filepath.EvalSymlinks(absRoot); err == nil {
		absRoot = realRoot
	}
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(absRoot, p)
	}
	full = filepath.Clean(full)
	if real, err := filepath.EvalSymlinks(full); err == nil {
		full = real
	}
	rel, err := filepath.Rel(absRoot, full)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", core.Errorf(core.CodeValidationError, "%s is outside the documents root", p)
	}
	return full, nil
}
