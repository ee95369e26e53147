package core_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
)

// TestStorageEvalRunOwners: the eval history follows the session
// ownership rule. A run belongs to the identity that saved it; to another
// identity it is a missing run, in GetEvalRun and in ListEvalRuns alike.
func TestStorageEvalRunOwners(t *testing.T) {
	alice := &core.AuthIdentity{Subject: "alice"}
	bob := &core.AuthIdentity{Subject: "bob"}
	root := &core.AuthIdentity{Subject: "root"}
	admin := func(id *core.AuthIdentity) bool { return id.Subject == "root" }
	cases := []struct {
		name     string
		rule     bool
		caller   *core.AuthIdentity
		sees     []string // ListEvalRuns, newest first
		filterBy string   // a StartedBy the caller asks for
		gets     []string // GetEvalRun finds, when not sees
	}{
		{"rule off: everyone sees all", false, bob, []string{"e-bob", "e-alice", "e-none"}, "", nil},
		{"rule on: alice sees hers", true, alice, []string{"e-alice"}, "", nil},
		{"rule on: bob sees his", true, bob, []string{"e-bob"}, "", nil},
		{"rule on: bob asking for alice's sees none", true, bob, nil, core.OwnerKey(alice), []string{"e-bob"}},
		{"rule on: an admin sees all", true, root, []string{"e-bob", "e-alice", "e-none"}, "", nil},
		{"rule on: no identity sees all", true, nil, []string{"e-bob", "e-alice", "e-none"}, "", nil},
		{"rule on: an identity without a subject sees none", true, &core.AuthIdentity{}, nil, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := core.NewStorage(memory.New())
			if c.rule {
				st.OwnSessions(core.SessionOwners{Admin: admin})
			}
			save := func(who *core.AuthIdentity, id string, at int64) {
				ctx := t.Context()
				if who != nil {
					ctx = core.WithIdentity(ctx, who)
				}
				if err := st.SaveEvalRun(ctx, core.EvalRun{ID: id, AgentID: "a", CreatedAt: at}); err != nil {
					t.Fatal(err)
				}
			}
			save(nil, "e-none", 1)
			save(alice, "e-alice", 2)
			save(bob, "e-bob", 3)
			ctx := t.Context()
			if c.caller != nil {
				ctx = core.WithIdentity(ctx, c.caller)
			}
			list, err := st.ListEvalRuns(ctx, core.EvalRunFilter{AgentID: "a", StartedBy: c.filterBy})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range list {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, c.sees) {
				t.Errorf("ListEvalRuns = %v, want %v", got, c.sees)
			}
			for _, id := range []string{"e-none", "e-alice", "e-bob"} {
				r, err := st.GetEvalRun(ctx, id)
				gets := c.sees
				if c.gets != nil {
					gets = c.gets
				}
				visible := slices.Contains(gets, id)
				switch {
				case visible && err != nil:
					t.Errorf("GetEvalRun(%s) = %v, want the run", id, err)
				case !visible && !errors.Is(err, core.ErrEvalRunNotFound):
					t.Errorf("GetEvalRun(%s) = %+v, %v; want EVAL_RUN_NOT_FOUND", id, r, err)
				case !visible && err.Error() != `EVAL_RUN_NOT_FOUND: eval run "`+id+`" not found`:
					t.Errorf("GetEvalRun(%s) message %q tells more than a missing run's", id, err.Error())
				}
			}
			if r, err := st.GetEvalRun(core.WithIdentity(t.Context(), root), "e-alice"); err != nil || r.StartedBy != core.OwnerKey(alice) {
				t.Errorf("SaveEvalRun did not record alice as the starter: %+v, %v", r, err)
			}
		})
	}
}
