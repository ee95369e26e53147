package postgres_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/storetest"
	"github.com/breadai/bread/stores/postgres"
)

// allFeatures is every optional capability: the store claims them all.
var allFeatures = storetest.Features{
	Runs: true, RunList: true, SessionStarters: true, MessageDelete: true, Loops: true, CrumbLog: true,
	TaskRuns: true, Knowledge: true, Documents: true, EvalRuns: true, Migrate: true, Ping: true, ClosedErrors: true, SessionState: true, RunSubscriptions: true,
}

func TestConformance(t *testing.T) {
	serverURL(t)
	storetest.Run(t, allFeatures, func(t *testing.T) core.BreadStore { return newStore(t, postgres.Options{}) })
}
