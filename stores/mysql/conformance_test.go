package mysql_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/storetest"
	"github.com/breadai/bread/stores/internal/bunstore/bunstoretest"
	"github.com/breadai/bread/stores/mysql"
)

// allFeatures is every optional capability: the store claims them all.
var allFeatures = storetest.Features{
	Runs: true, RunList: true, SessionStarters: true, MessageDelete: true, Loops: true, CrumbLog: true,
	TaskRuns: true, Knowledge: true, Documents: true, EvalRuns: true, Migrate: true, Ping: true, ClosedErrors: true, SessionState: true, RunSubscriptions: true,
}

func TestConformance(t *testing.T) {
	serverDSN(t)
	storetest.Run(t, allFeatures, func(t *testing.T) core.BreadStore { return newStore(t, mysql.Options{}) })
}

func TestPayloadBytesExact(t *testing.T) {
	bunstoretest.PayloadBytesExact(t, newStore(t, mysql.Options{}))
}

func TestMigrationHistory(t *testing.T) {
	url := freshDatabaseURL(t)
	bunstoretest.MigrationHistory(t, func(t *testing.T) bunstoretest.Migrating {
		s, err := mysql.New(mysql.Options{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
