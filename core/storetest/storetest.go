package storetest

import (
	"io"
	"reflect"
	"testing"

	"github.com/breadai/bread/core"
)

// Features declares which optional capabilities a store claims. Run fails a
// store that claims a capability it does not implement, and skips, with the
// reason, every case that needs a capability the store does not claim.
type Features struct {
	// CrumbLog: the store implements core.CrumbLog.
	CrumbLog bool
	// Loops: the store implements core.LoopStore.
	Loops bool
	// Runs: the store implements core.RunStore.
	Runs bool
	// TaskRuns: the store implements core.TaskRunStore.
	TaskRuns bool
	// Knowledge: the store implements core.KnowledgeStore.
	Knowledge bool
	// Documents: the store implements core.DocumentStore.
	Documents bool
	// ClosedErrors: the store implements io.Closer, Close may be called more
	// than once, and every call after the first Close fails with an error
	// matching core.ErrStoreClosed.
	ClosedErrors bool
}

// Harness returns a fresh, empty, migrated store for one test. It registers
// whatever teardown the store needs with t.Cleanup (closing it, dropping a
// schema, ...). Run calls it once per case, never concurrently.
type Harness func(t *testing.T) core.BreadStore

// feature names a capability a case needs.
type feature int

const (
	needsNothing feature = iota
	needsCrumbLog
	needsLoops
	needsRuns
	needsTaskRuns
	needsKnowledge
	needsDocuments
	needsClosedErrors
)

// testCase is one conformance check. It receives a fresh store.
type testCase struct {
	name  string
	needs feature
	run   func(t *testing.T, s core.BreadStore)
}

// group is a named list of cases, one t.Run level.
type group struct {
	name  string
	cases []testCase
}

// Run runs every conformance case against stores made by newStore, each case
// as its own subtest on its own fresh store.
func Run(t *testing.T, f Features, newStore Harness) {
	t.Helper()
	t.Run("Features", func(t *testing.T) { checkClaims(t, f, newStore(t)) })
	for _, g := range groups() {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					if reason := f.missing(c.needs); reason != "" {
						t.Skip(reason)
					}
					c.run(t, newStore(t))
				})
			}
		})
	}
}

func groups() []group {
	return []group{
		{"Sessions", sessionCases()},
		{"Messages", messageCases()},
		{"Checkpoints", checkpointCases()},
		{"Claims", claimCases()},
		{"Joins", joinCases()},
		{"SuspendRun", suspendCases()},
		{"Cascade", cascadeCases()},
		{"Loops", loopCases()},
		{"Runs", runCases()},
		{"TaskRuns", taskRunCases()},
		{"CrumbLog", crumbLogCases()},
		{"Knowledge", knowledgeCases()},
		{"Documents", documentCases()},
		{"Isolation", isolationCases()},
		{"Context", contextCases()},
		{"Concurrency", concurrencyCases()},
		{"Lifecycle", lifecycleCases()},
	}
}

// missing returns why a case needing n cannot run, or "" when it can.
func (f Features) missing(n feature) string {
	switch {
	case n == needsCrumbLog && !f.CrumbLog:
		return "store does not claim Features.CrumbLog (core.CrumbLog)"
	case n == needsLoops && !f.Loops:
		return "store does not claim Features.Loops (core.LoopStore)"
	case n == needsRuns && !f.Runs:
		return "store does not claim Features.Runs (core.RunStore)"
	case n == needsTaskRuns && !f.TaskRuns:
		return "store does not claim Features.TaskRuns (core.TaskRunStore)"
	case n == needsKnowledge && !f.Knowledge:
		return "store does not claim Features.Knowledge (core.KnowledgeStore)"
	case n == needsDocuments && !f.Documents:
		return "store does not claim Features.Documents (core.DocumentStore)"
	case n == needsClosedErrors && !f.ClosedErrors:
		return "store does not claim Features.ClosedErrors (errors after Close)"
	}
	return ""
}

// checkClaims fails for every claimed capability the store lacks and notes
// the capabilities it has but does not claim (their cases are skipped).
func checkClaims(t *testing.T, f Features, s core.BreadStore) {
	claims := []struct {
		field   string
		claimed bool
		iface   reflect.Type
	}{
		{"CrumbLog", f.CrumbLog, reflect.TypeFor[core.CrumbLog]()},
		{"Loops", f.Loops, reflect.TypeFor[core.LoopStore]()},
		{"Runs", f.Runs, reflect.TypeFor[core.RunStore]()},
		{"TaskRuns", f.TaskRuns, reflect.TypeFor[core.TaskRunStore]()},
		{"Knowledge", f.Knowledge, reflect.TypeFor[core.KnowledgeStore]()},
		{"Documents", f.Documents, reflect.TypeFor[core.DocumentStore]()},
		{"ClosedErrors", f.ClosedErrors, reflect.TypeFor[io.Closer]()},
	}
	for _, c := range claims {
		has := reflect.TypeOf(s).Implements(c.iface)
		switch {
		case c.claimed && !has:
			t.Errorf("Features.%s is set but %T does not implement %s", c.field, s, c.iface)
		case !c.claimed && has:
			t.Logf("%T implements %s but Features.%s is not set: its cases will be skipped", s, c.iface, c.field)
		}
	}
}

// capability returns s as T, failing the test when the store claimed a
// feature it does not implement.
func capability[T any](t *testing.T, s core.BreadStore) T {
	t.Helper()
	v, ok := s.(T)
	if !ok {
		t.Fatalf("the store claims the feature but %T does not implement %s", s, reflect.TypeFor[T]())
	}
	return v
}
