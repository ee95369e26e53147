package core

import (
	"log/slog"
	"time"
)

// Config is everything an Instance is built from. Store is required; every
// other field is optional.
type Config struct {
	// Entrypoints are the agents an ingress exposes; empty exposes all.
	Entrypoints []string
	Agents      []*Agent
	Pipelines   map[string][]PipelineStep
	// Tasks are one-shot structured model calls agents use as tools.
	Tasks []*Task
	// Decisions are named fast deciders for core_decide, route steps and
	// hooks.
	Decisions map[string]Decider

	// Store is the storage backend. There is no default: nil is
	// STORE_NOT_CONFIGURED.
	Store BreadStore
	// BlobStore keeps files; optional.
	BlobStore BlobStore
	// Transport is the live crumb fabric; nil is the embedded in-process
	// transport (core/stream semantics, single replica).
	Transport BreadTransport
	// Providers are the named model providers.
	Providers ProviderRegistry
	Plugins   []BreadPlugin
	Hooks     Hooks
	// ErrorHandling is the default retry policy for agent runs.
	ErrorHandling ErrorHandling
	RemoteAgents  map[string]RemoteAgent
	// Credentials is the default secret resolver for tools; nil reads the
	// environment.
	Credentials CredentialProvider
	// CrumbFilter, when set, decides which crumbs reach the transport. The
	// log and local listeners see every crumb.
	CrumbFilter func(Crumb) bool
	// MaxConcurrentRuns caps runs in flight on this Instance; 0 is no cap.
	// At the cap a new run fails with CONCURRENCY_LIMIT.
	MaxConcurrentRuns int
	// CrumbLog tunes the delta windows of the crumb log.
	CrumbLog CrumbLogOptions
	// Logger receives warnings (a disabled crumb log, a failed publish);
	// nil is slog.Default().
	Logger *slog.Logger
}

// CrumbLogOptions tunes how text and reasoning deltas are aggregated before
// they are logged.
type CrumbLogOptions struct {
	// MaxBufferBytes flushes a delta window at this size (default 4096).
	MaxBufferBytes int
	// MaxBufferAge flushes a delta window this long after it opened
	// (default 1s).
	MaxBufferAge time.Duration
}

// RunOptions tune one run.
type RunOptions struct {
	// Session attaches the run to a session: an existing one by ID, or a new
	// one (with the ID, when given, and Tags).
	Session SessionOptions `json:"session,omitzero"`
	// Skill is a caller-driven skill for this run.
	Skill string `json:"skill,omitempty"`
}

// SessionOptions selects or creates a run's session.
type SessionOptions struct {
	ID   string            `json:"id,omitempty"`
	Tags map[string]string `json:"tags,omitempty"`
}
