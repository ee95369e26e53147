package engine

import (
	"log/slog"
	"time"

	"github.com/breadai/bread/core"
)

// Config is everything an Instance is built from. Store is required; every
// other field is optional.
type Config struct {
	// Entrypoints are the agents an ingress exposes; empty exposes all.
	Entrypoints []string
	Agents      []*core.Agent
	Pipelines   map[string][]core.PipelineStep
	// Tasks are one-shot structured model calls agents use as tools.
	Tasks []*core.Task
	// Decisions are named fast deciders for core_decide, route steps and
	// hooks.
	Decisions map[string]core.Decider

	// Store is the storage backend. There is no default: nil is
	// STORE_NOT_CONFIGURED.
	Store core.BreadStore
	// BlobStore keeps files; optional.
	BlobStore core.BlobStore
	// Bus is the live crumb fabric between replicas; nil is the embedded
	// in-process bus (core/stream, a single replica).
	Bus core.BreadBus
	// Providers are the named model providers.
	Providers core.ProviderRegistry
	Plugins   []core.BreadPlugin
	Hooks     core.Hooks
	// ErrorHandling is the default retry policy for agent runs.
	ErrorHandling core.ErrorHandling
	RemoteAgents  map[string]core.RemoteAgent
	// Credentials is the default secret resolver for tools; nil reads the
	// environment.
	Credentials core.CredentialProvider
	// CrumbFilter, when set, decides which crumbs reach the bus. The
	// log and local listeners see every crumb.
	CrumbFilter func(core.Crumb) bool
	// MaxConcurrentRuns caps runs in flight on this Instance; 0 is no cap.
	// At the cap a new run fails with CONCURRENCY_LIMIT.
	MaxConcurrentRuns int
	// SessionConcurrency is the busy-session policy of agents that set
	// none (core.Agent.Concurrency); empty is core.ConcurrencyReject.
	SessionConcurrency core.ConcurrencyPolicy
	// MaxDelegationDepth is the deepest a chain of delegations may nest: a
	// supervisor's core_delegate and a loop's iteration run their agents
	// one level below the run that called them, and the call that would go
	// past this level ends the run, and every run above it in the chain,
	// with DELEGATION_DEPTH_EXCEEDED. Zero is DefaultMaxDelegationDepth
	// (8); negative is INVALID_CONFIG. The depth travels in the run's
	// context: a chain resumed after a human answered counts again from
	// the resumed run, and a remote agent's own delegations are its own.
	MaxDelegationDepth int
	// RunLease is how long a run's lease in a core.RunStore lasts unless
	// this instance renews it (default DefaultRunLease). A shorter lease
	// ends the tails of a crashed instance's runs sooner, at the cost of
	// more renewals.
	RunLease time.Duration
	// Clock times leases, claims and heartbeats (see Clock); nil is the
	// real clock.
	Clock Clock
	// Jobs is the durable queue background runs are executed from, by a
	// worker on any replica sharing its backend (jobs/river on PostgreSQL
	// or SQLite). nil runs background runs on goroutines of this Instance:
	// they do not survive its process.
	Jobs core.JobQueue
	// Schedules are runs on a timetable. With Jobs, each tick fires once
	// across every replica sharing its backend; without, this Instance
	// fires them on an in-process queue.
	Schedules []Schedule
	// Webhooks configure the signed POSTs of background runs' records
	// (core.BackgroundOptions.Webhook).
	Webhooks WebhookOptions
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
