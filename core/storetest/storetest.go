package storetest

import (
	"reflect"
	"testing"

	"github.com/breadai/bread/core"
)

// Features declares which optional capabilities a store claims, one field
// per core.StoreCapability. Run fails a store that claims a capability it
// does not have (found as core.NewStorage finds it: by type assertion or
// through the store's As method), and skips, with the reason, every case
// that needs a capability the store does not claim.
type Features struct {
	// Runs: the store implements core.RunStore.
	Runs bool
	// RunList: the store implements core.RunLister.
	RunList bool
	// SessionStarters: the store implements core.SessionStarters.
	SessionStarters bool
	// MessageDelete: the store implements core.MessageDeleter.
	MessageDelete bool
	// Loops: the store implements core.LoopStore.
	Loops bool
	// CrumbLog: the store implements core.CrumbLog.
	CrumbLog bool
	// InlineCrumbLog: its crumb log is a core.InlineCrumbLog reporting
	// AppendsInline (it writes at memory speed).
	InlineCrumbLog bool
	// TaskRuns: the store implements core.TaskRunStore.
	TaskRuns bool
	// Knowledge: the store implements core.KnowledgeStore.
	Knowledge bool
	// Documents: the store implements core.DocumentStore.
	Documents bool
	// EvalRuns: the store implements core.EvalRunStore.
	EvalRuns bool
	// Start: the store implements core.Starter.
	Start bool
	// Migrate: the store implements core.Migrator, and migrating a
	// migrated store again changes nothing.
	Migrate bool
	// Ping: the store implements core.Pinger.
	Ping bool
	// ClosedErrors: the store implements io.Closer, Close may be called more
	// than once, and every call after the first Close fails with an error
	// matching core.ErrStoreClosed.
	ClosedErrors bool
	// SessionState: the store implements core.SessionStateStore.
	SessionState bool
	// RunSubscriptions: the store implements core.RunSubscriptionStore.
	RunSubscriptions bool
}

// featureFields ties each field of Features to its capability.
var featureFields = []struct {
	field string
	cap   core.StoreCapability
	of    func(Features) bool
}{
	{"Runs", core.StoreRuns, func(f Features) bool { return f.Runs }},
	{"RunList", core.StoreRunList, func(f Features) bool { return f.RunList }},
	{"SessionStarters", core.StoreSessionStarters, func(f Features) bool { return f.SessionStarters }},
	{"MessageDelete", core.StoreMessageDelete, func(f Features) bool { return f.MessageDelete }},
	{"Loops", core.StoreLoops, func(f Features) bool { return f.Loops }},
	{"CrumbLog", core.StoreCrumbLog, func(f Features) bool { return f.CrumbLog }},
	{"InlineCrumbLog", core.StoreInlineCrumbLog, func(f Features) bool { return f.InlineCrumbLog }},
	{"TaskRuns", core.StoreTaskRuns, func(f Features) bool { return f.TaskRuns }},
	{"Knowledge", core.StoreKnowledge, func(f Features) bool { return f.Knowledge }},
	{"Documents", core.StoreDocuments, func(f Features) bool { return f.Documents }},
	{"EvalRuns", core.StoreEvalRuns, func(f Features) bool { return f.EvalRuns }},
	{"Start", core.StoreStart, func(f Features) bool { return f.Start }},
	{"Migrate", core.StoreMigrate, func(f Features) bool { return f.Migrate }},
	{"Ping", core.StorePing, func(f Features) bool { return f.Ping }},
	{"ClosedErrors", core.StoreClose, func(f Features) bool { return f.ClosedErrors }},
	{"SessionState", core.StoreSessionState, func(f Features) bool { return f.SessionState }},
	{"RunSubscriptions", core.StoreRunSubscriptions, func(f Features) bool { return f.RunSubscriptions }},
}

// claims is the set of capabilities f claims.
func (f Features) claims() core.StoreCapability {
	var c core.StoreCapability
	for _, ff := range featureFields {
		if ff.of(f) {
			c |= ff.cap
		}
	}
	return c
}

// Harness returns a fresh, empty, migrated store for one test. It registers
// whatever teardown the store needs with t.Cleanup (closing it, dropping a
// schema, ...). Run calls it once per case, never concurrently.
type Harness func(t *testing.T) core.BreadStore

// feature is the set of capabilities a case needs.
type feature = core.StoreCapability

const (
	needsNothing          feature = 0
	needsRuns                     = core.StoreRuns
	needsRunList                  = core.StoreRunList
	needsSessionStarters          = core.StoreSessionStarters
	needsMessageDelete            = core.StoreMessageDelete
	needsLoops                    = core.StoreLoops
	needsCrumbLog                 = core.StoreCrumbLog
	needsTaskRuns                 = core.StoreTaskRuns
	needsKnowledge                = core.StoreKnowledge
	needsDocuments                = core.StoreDocuments
	needsEvalRuns                 = core.StoreEvalRuns
	needsMigrate                  = core.StoreMigrate
	needsPing                     = core.StorePing
	needsClosedErrors             = core.StoreClose
	needsSessionState             = core.StoreSessionState
	needsRunSubscriptions         = core.StoreRunSubscriptions
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
		{"Owners", ownerCases()},
		{"Messages", messageCases()},
		{"SessionState", stateCases()},
		{"RunSubscriptions", subscriptionCases()},
		{"Checkpoints", checkpointCases()},
		{"Claims", claimCases()},
		{"Joins", joinCases()},
		{"SuspendRun", suspendCases()},
		{"Cascade", cascadeCases()},
		{"Loops", loopCases()},
		{"Runs", runCases()},
		{"RunWrite", runWriteCases()},
		{"RunFence", fenceCases()},
		{"TaskRuns", taskRunCases()},
		{"CrumbLog", crumbLogCases()},
		{"Knowledge", knowledgeCases()},
		{"Documents", documentCases()},
		{"EvalRuns", evalRunCases()},
		{"Isolation", isolationCases()},
		{"Context", contextCases()},
		{"Concurrency", concurrencyCases()},
		{"Lifecycle", lifecycleCases()},
		{"Wrapped", wrapperCases()},
	}
}

// missing returns why a case needing n cannot run, or "" when it can.
func (f Features) missing(n feature) string {
	lack := n &^ f.claims()
	for _, ff := range featureFields {
		if lack&ff.cap != 0 {
			return "store does not claim Features." + ff.field + " (" + ff.cap.String() + ")"
		}
	}
	return ""
}

// checkClaims fails for every claimed capability the store lacks and notes
// the capabilities it has but does not claim (their cases are skipped).
func checkClaims(t *testing.T, f Features, s core.BreadStore) {
	has := core.NewStorage(s).Capabilities()
	for _, ff := range featureFields {
		claimed, got := ff.of(f), has&ff.cap != 0
		switch {
		case claimed && !got:
			t.Errorf("Features.%s is set but %T does not have %s", ff.field, s, ff.cap)
		case !claimed && got:
			t.Logf("%T has %s but Features.%s is not set: its cases will be skipped", s, ff.cap, ff.field)
		}
	}
}

// optional returns the store's capability T, found as core.NewStorage
// finds it.
func optional[T any](s core.BreadStore) (T, bool) {
	var v T
	ok := core.As(s, &v)
	return v, ok
}

// capability returns the store's capability T, failing the test when the
// store claimed a feature it does not have.
func capability[T any](t *testing.T, s core.BreadStore) T {
	t.Helper()
	v, ok := optional[T](s)
	if !ok {
		t.Fatalf("the store claims the feature but %T does not have %s", s, reflect.TypeFor[T]())
	}
	return v
}
