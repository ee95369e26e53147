package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

// ownerCases check the owner a session records (core.Session.Owner), as
// the store keeps and filters it and as core.Storage's ownership rule
// (OwnSessions) reads it.
func ownerCases() []testCase {
	return []testCase{
		{name: "CreateSession keeps the owner; ListSessions and CleanupSessions filter by it", run: testOwnerStored},
		{name: "Storage records the caller as owner and confines sessions to it", run: testOwnerRule},
		{name: "loops follow their session's owner", needs: needsLoops, run: testOwnerLoops},
		{name: "task runs follow their session's owner", needs: needsTaskRuns, run: testOwnerTaskRuns},
	}
}

func testOwnerStored(t *testing.T, s core.BreadStore) {
	a := createSession(t, s, core.NewSession{ID: "of-a", Owner: `"jwt" "iss" "alice"`})
	createSession(t, s, core.NewSession{ID: "of-b", Owner: `"jwt" "iss" "bob"`})
	createSession(t, s, core.NewSession{ID: "of-none"})
	equal(t, "CreateSession's Owner", `"jwt" "iss" "alice"`, a.Owner)
	got, err := s.GetSession(t.Context(), "of-a")
	noErr(t, err, "GetSession")
	equal(t, "GetSession's Owner", `"jwt" "iss" "alice"`, got.Owner)
	none, err := s.GetSession(t.Context(), "of-none")
	noErr(t, err, "GetSession")
	equal(t, "Owner of a session created without one", "", none.Owner)

	for _, c := range []struct {
		owner string
		want  []string
	}{
		{"", []string{"of-a", "of-b", "of-none"}},
		{`"jwt" "iss" "alice"`, []string{"of-a"}},
		{`"jwt" "iss" "nobody"`, nil},
	} {
		list, err := s.ListSessions(t.Context(), core.SessionFilter{Owner: c.owner})
		noErr(t, err, "ListSessions(Owner %q)", c.owner)
		sameSet(t, fmt.Sprintf("ListSessions(Owner %q)", c.owner), c.want, ids(list, sessionID))
		for _, l := range list {
			if l.ID == "of-a" {
				equal(t, "ListSessions' Owner", `"jwt" "iss" "alice"`, l.Owner)
			}
		}
	}

	ageOut(core.NowMillis())
	n, err := s.CleanupSessions(t.Context(), core.CleanupOptions{OlderThan: cleanupWindow, Owner: `"jwt" "iss" "bob"`})
	noErr(t, err, "CleanupSessions(Owner bob)")
	equal(t, "CleanupSessions(Owner bob) count", 1, n)
	_, err = s.GetSession(t.Context(), "of-b")
	isErr(t, err, core.ErrSessionNotFound, "bob's session after his cleanup")
	assertExists(t, s, "of-a")
	assertExists(t, s, "of-none")
}

// as is ctx carrying a caller authenticated by strategy "jwt".
func as(ctx context.Context, subject string) context.Context {
	return core.WithIdentity(ctx, &core.AuthIdentity{Subject: subject, Claims: map[string]any{"bread.strategy": "jwt"}})
}

// alicesID is the id alice gives her session: under the rule a caller
// names a new session only with a random UUID.
const alicesID = "01939b9a-7c3e-7b2a-9d4f-2a6b1c0e8f31"

func testOwnerRule(t *testing.T, s core.BreadStore) {
	st := core.NewStorage(s)
	st.OwnSessions(core.SessionOwners{Admin: func(id *core.AuthIdentity) bool { return id.Subject == "root" }})
	bg := t.Context()
	alice, bob, root := as(bg, "alice"), as(bg, "bob"), as(bg, "root")

	made, err := st.CreateSession(alice, core.NewSession{ID: alicesID})
	noErr(t, err, "CreateSession as alice")
	aliceKey := core.OwnerKey(core.IdentityFrom(alice))
	equal(t, "Owner recorded from the caller", aliceKey, made.Owner)
	noErr(t, st.AddMessage(alice, alicesID, textMessage(core.RoleUser, "secret", core.NowMillis())), "AddMessage as alice")
	noErr(t, st.SaveCheckpoint(alice, checkpoint("cp-alice", alicesID, baseTime)), "SaveCheckpoint as alice")
	_, err = st.CreateSession(bg, core.NewSession{ID: "nobodys"})
	noErr(t, err, "CreateSession without an identity")

	// To bob, alice's session and the one without an owner are missing.
	for _, id := range []string{alicesID, "nobodys"} {
		_, err = st.GetSession(bob, id)
		isErr(t, err, core.ErrSessionNotFound, "GetSession(%q) as bob", id)
		_, err = st.GetMessages(bob, id)
		isErr(t, err, core.ErrSessionNotFound, "GetMessages(%q) as bob", id)
		isErr(t, st.AddMessage(bob, id, textMessage(core.RoleUser, "hi", core.NowMillis())), core.ErrSessionNotFound, "AddMessage(%q) as bob", id)
		isErr(t, st.SuspendRun(bob, id, nil), core.ErrSessionNotFound, "SuspendRun(%q) as bob", id)
		isErr(t, st.DeleteSession(bob, id), core.ErrSessionNotFound, "DeleteSession(%q) as bob", id)
		isErr(t, st.CheckSession(bob, id), core.ErrSessionNotFound, "CheckSession(%q) as bob", id)
		_, err = st.CreateSession(bob, core.NewSession{ID: id})
		isErr(t, err, core.ErrSessionNotFound, "CreateSession(%q) as bob", id)
	}
	isErr(t, st.DeleteSession(bob, "no-such-session"), core.ErrSessionNotFound, "DeleteSession of a missing session as bob")
	// A free id bob may take is a random UUID; a free id of any other form
	// is refused exactly as the taken "nobodys" is, so the refusal tells
	// nothing of which ids are taken.
	const freeUUID = "0b1c7e52-3f0a-4d6e-9a8b-5c4d3e2f1a0b" // version 4
	noErr(t, st.CheckSession(bob, freeUUID), "CheckSession of a free UUID as bob")
	for _, id := range []string{"no-such-session", "01939b9a-7c3e-1b2a-9d4f-2a6b1c0e8f31" /* version 1 */, "0B1C7E52-3F0A-4D6E-9A8B-5C4D3E2F1A0B0" /* 37 bytes */} {
		free, taken := st.CheckSession(bob, id), st.CheckSession(bob, "nobodys")
		isErr(t, free, core.ErrSessionNotFound, "CheckSession(%q), free and not a random UUID, as bob", id)
		if free != nil && taken != nil && strings.ReplaceAll(free.Error(), id, "ID") != strings.ReplaceAll(taken.Error(), "nobodys", "ID") {
			t.Errorf("bob tells a free id from a taken one: %q vs %q", free, taken)
		}
		_, err = st.CreateSession(bob, core.NewSession{ID: id})
		isErr(t, err, core.ErrSessionNotFound, "CreateSession(%q) as bob", id)
	}
	if made, err := st.CreateSession(bob, core.NewSession{ID: freeUUID}); err != nil || made.ID != freeUUID {
		t.Errorf("CreateSession of a free UUID as bob: %+v, %v", made, err)
	}
	// A session of alice's with an id of another form (made before the
	// rule, or for her by an operator) stays hers to continue.
	_, err = st.CreateSession(bg, core.NewSession{ID: "alices-old", Owner: core.OwnerKey(core.IdentityFrom(alice))})
	noErr(t, err, "CreateSession of alice's old session without an identity")
	noErr(t, st.CheckSession(alice, "alices-old"), "CheckSession of her old session as alice")
	isErr(t, st.CheckSession(bob, "alices-old"), core.ErrSessionNotFound, "CheckSession of alice's old session as bob")
	_, err = st.GetCheckpoint(bob, "cp-alice")
	isErr(t, err, core.ErrCheckpointNotFound, "GetCheckpoint of alice's checkpoint as bob")
	list, err := st.ListSessions(bob, core.SessionFilter{})
	noErr(t, err, "ListSessions as bob")
	equalList(t, "sessions bob lists", []string{freeUUID}, ids(list, sessionID))
	ageOut(core.NowMillis())
	n, err := st.CleanupSessions(bob, core.CleanupOptions{OlderThan: cleanupWindow})
	noErr(t, err, "CleanupSessions as bob")
	equal(t, "sessions bob's cleanup deletes (his own)", 1, n)
	nobody := core.WithIdentity(bg, &core.AuthIdentity{})
	_, err = st.GetSession(nobody, "nobodys")
	isErr(t, err, core.ErrSessionNotFound, "GetSession as an identity without a subject")

	// Alice, the admin and a caller without an identity see it.
	for name, ctx := range map[string]context.Context{"alice": alice, "root": root, "no identity": bg} {
		_, err = st.GetSession(ctx, alicesID)
		noErr(t, err, "GetSession as %s", name)
		msgs, err := st.GetMessages(ctx, alicesID)
		noErr(t, err, "GetMessages as %s", name)
		equal(t, "messages "+name+" reads", 1, len(msgs))
		_, err = st.GetCheckpoint(ctx, "cp-alice")
		noErr(t, err, "GetCheckpoint as %s", name)
		noErr(t, st.CheckSession(ctx, alicesID), "CheckSession as %s", name)
	}
	list, err = st.ListSessions(alice, core.SessionFilter{})
	noErr(t, err, "ListSessions as alice")
	sameSet(t, "sessions alice lists", []string{alicesID, "alices-old"}, ids(list, sessionID))
	list, err = st.ListSessions(root, core.SessionFilter{})
	noErr(t, err, "ListSessions as root")
	sameSet(t, "sessions root lists", []string{alicesID, "alices-old", "nobodys"}, ids(list, sessionID))
	noErr(t, st.DeleteSession(alice, alicesID), "DeleteSession as alice")
	noErr(t, st.DeleteSession(root, "nobodys"), "DeleteSession as root")
	_, err = s.GetSession(bg, alicesID)
	isErr(t, err, core.ErrSessionNotFound, "alice's session after she deleted it")
}

// ownedSessions creates a session of alice, one of bob and one without an
// owner, and returns the callers: alice, bob, an admin (root), an identity
// without a subject, and a context without an identity, all on st with the
// ownership rule on.
func ownedSessions(t *testing.T, s core.BreadStore) (st *core.Storage, alice, bob, root, nobody, bg context.Context) {
	t.Helper()
	st = core.NewStorage(s)
	st.OwnSessions(core.SessionOwners{Admin: func(id *core.AuthIdentity) bool { return id.Subject == "root" }})
	bg = t.Context()
	alice, bob, root = as(bg, "alice"), as(bg, "bob"), as(bg, "root")
	nobody = core.WithIdentity(bg, &core.AuthIdentity{})
	createSession(t, s, core.NewSession{ID: "of-a", Owner: core.OwnerKey(core.IdentityFrom(alice))})
	createSession(t, s, core.NewSession{ID: "of-b", Owner: core.OwnerKey(core.IdentityFrom(bob))})
	createSession(t, s, core.NewSession{ID: "of-none"})
	return st, alice, bob, root, nobody, bg
}

func testOwnerLoops(t *testing.T, s core.BreadStore) {
	st, alice, bob, root, nobody, bg := ownedSessions(t, s)
	ls := capability[core.LoopStore](t, s)
	noErr(t, ls.CreateLoop(bg, loop("loop-a", "of-a", baseTime)), "CreateLoop")
	noErr(t, ls.CreateLoop(bg, loop("loop-b", "of-b", baseTime+1)), "CreateLoop")
	noErr(t, ls.CreateLoop(bg, loop("loop-none", "of-none", baseTime+2)), "CreateLoop")

	// The store's own filter.
	for _, c := range []struct {
		f    core.LoopFilter
		want []string
	}{
		{core.LoopFilter{}, []string{"loop-a", "loop-b", "loop-none"}},
		{core.LoopFilter{Owner: core.OwnerKey(core.IdentityFrom(alice))}, []string{"loop-a"}},
		{core.LoopFilter{Owner: core.OwnerKey(core.IdentityFrom(alice)), SessionID: "of-b"}, nil},
		{core.LoopFilter{Owner: `"jwt" "" "nobody"`}, nil},
	} {
		list, err := ls.ListLoops(bg, c.f)
		noErr(t, err, "ListLoops(%+v)", c.f)
		equalList(t, fmt.Sprintf("ListLoops(%+v)", c.f), c.want, ids(list, func(l core.LoopRecord) string { return l.ID }))
	}

	// The rule, through Storage.
	for _, c := range []struct {
		who  string
		ctx  context.Context
		f    core.LoopFilter
		want []string
	}{
		{"bob", bob, core.LoopFilter{}, []string{"loop-b"}},
		{"bob", bob, core.LoopFilter{SessionID: "of-a"}, nil},
		{"alice", alice, core.LoopFilter{}, []string{"loop-a"}},
		{"an identity without a subject", nobody, core.LoopFilter{}, nil},
		{"root", root, core.LoopFilter{}, []string{"loop-a", "loop-b", "loop-none"}},
		{"no identity", bg, core.LoopFilter{}, []string{"loop-a", "loop-b", "loop-none"}},
	} {
		list, err := st.ListLoops(c.ctx, c.f)
		noErr(t, err, "ListLoops(%+v) as %s", c.f, c.who)
		equalList(t, fmt.Sprintf("ListLoops(%+v) as %s", c.f, c.who), c.want, ids(list, func(l core.LoopRecord) string { return l.ID }))
	}
	for _, id := range []string{"loop-a", "loop-none", "no-such-loop"} {
		_, err := st.GetLoop(bob, id)
		isErr(t, err, core.ErrLoopNotFound, "GetLoop(%q) as bob", id)
	}
	for name, ctx := range map[string]context.Context{"bob": bob, "root": root, "no identity": bg} {
		d, err := st.GetLoop(ctx, "loop-b")
		noErr(t, err, "GetLoop of bob's loop as %s", name)
		equal(t, "the loop "+name+" reads", "loop-b", d.Loop.ID)
	}
}

func testOwnerTaskRuns(t *testing.T, s core.BreadStore) {
	st, alice, bob, root, nobody, bg := ownedSessions(t, s)
	ts := capability[core.TaskRunStore](t, s)
	put := func(id, sessionID string, at int64) {
		t.Helper()
		r := taskRun(id, "extract", at)
		r.SessionID = sessionID
		if sessionID == "" {
			r.AgentID, r.RunID = "", ""
		}
		noErr(t, ts.CreateTaskRun(bg, r), "CreateTaskRun(%s)", id)
	}
	// Newest first: bob's two are older than alice's, so a Limit applied
	// before the owner filter would leave bob nothing.
	put("tr-b1", "of-b", baseTime)
	put("tr-b2", "of-b", baseTime+1)
	put("tr-a1", "of-a", baseTime+2)
	put("tr-a2", "of-a", baseTime+3)
	put("tr-none", "of-none", baseTime+4)
	put("tr-standalone", "", baseTime+5)
	bobKey := core.OwnerKey(core.IdentityFrom(bob))
	taskID := func(r core.TaskRunRecord) string { return r.ID }

	for _, c := range []struct {
		f    core.TaskRunFilter
		want []string
	}{
		{core.TaskRunFilter{Owner: bobKey}, []string{"tr-b2", "tr-b1"}},
		{core.TaskRunFilter{Owner: bobKey, Limit: 1}, []string{"tr-b2"}},
		{core.TaskRunFilter{Owner: bobKey, SessionID: "of-a"}, nil},
		{core.TaskRunFilter{Owner: `"jwt" "" "nobody"`}, nil},
		{core.TaskRunFilter{Limit: 2}, []string{"tr-standalone", "tr-none"}},
	} {
		list, err := ts.ListTaskRuns(bg, c.f)
		noErr(t, err, "ListTaskRuns(%+v)", c.f)
		equalList(t, fmt.Sprintf("ListTaskRuns(%+v)", c.f), c.want, ids(list, taskID))
	}

	all := []string{"tr-standalone", "tr-none", "tr-a2", "tr-a1", "tr-b2", "tr-b1"}
	for _, c := range []struct {
		who  string
		ctx  context.Context
		f    core.TaskRunFilter
		want []string
	}{
		{"bob", bob, core.TaskRunFilter{Limit: 1}, []string{"tr-b2"}},
		{"bob", bob, core.TaskRunFilter{SessionID: "of-a"}, nil},
		{"alice", alice, core.TaskRunFilter{}, []string{"tr-a2", "tr-a1"}},
		{"an identity without a subject", nobody, core.TaskRunFilter{}, nil},
		{"root", root, core.TaskRunFilter{}, all},
		{"no identity", bg, core.TaskRunFilter{}, all},
	} {
		list, err := st.ListTaskRuns(c.ctx, c.f)
		noErr(t, err, "ListTaskRuns(%+v) as %s", c.f, c.who)
		equalList(t, fmt.Sprintf("ListTaskRuns(%+v) as %s", c.f, c.who), c.want, ids(list, taskID))
	}
	for _, id := range []string{"tr-a1", "tr-none", "tr-standalone", "no-such-run"} {
		_, err := st.GetTaskRun(bob, id)
		isErr(t, err, core.ErrTaskRunNotFound, "GetTaskRun(%q) as bob", id)
	}
	for name, ctx := range map[string]context.Context{"bob": bob, "root": root, "no identity": bg} {
		r, err := st.GetTaskRun(ctx, "tr-b1")
		noErr(t, err, "GetTaskRun of bob's task run as %s", name)
		equal(t, "the task run "+name+" reads", "tr-b1", r.ID)
	}
	_, err := st.GetTaskRun(root, "tr-standalone")
	noErr(t, err, "GetTaskRun of a standalone task run as root")
}
