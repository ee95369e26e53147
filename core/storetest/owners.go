package storetest

import (
	"context"
	"fmt"
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

func testOwnerRule(t *testing.T, s core.BreadStore) {
	st := core.NewStorage(s)
	st.OwnSessions(core.SessionOwners{Admin: func(id *core.AuthIdentity) bool { return id.Subject == "root" }})
	bg := t.Context()
	alice, bob, root := as(bg, "alice"), as(bg, "bob"), as(bg, "root")

	made, err := st.CreateSession(alice, core.NewSession{ID: "alices"})
	noErr(t, err, "CreateSession as alice")
	aliceKey := core.OwnerKey(core.IdentityFrom(alice))
	equal(t, "Owner recorded from the caller", aliceKey, made.Owner)
	noErr(t, st.AddMessage(alice, "alices", textMessage(core.RoleUser, "secret", core.NowMillis())), "AddMessage as alice")
	noErr(t, st.SaveCheckpoint(alice, checkpoint("cp-alice", "alices", baseTime)), "SaveCheckpoint as alice")
	_, err = st.CreateSession(bg, core.NewSession{ID: "nobodys"})
	noErr(t, err, "CreateSession without an identity")

	// To bob, alice's session and the one without an owner are missing.
	for _, id := range []string{"alices", "nobodys"} {
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
	noErr(t, st.CheckSession(bob, "no-such-session"), "CheckSession of a free id as bob")
	_, err = st.GetCheckpoint(bob, "cp-alice")
	isErr(t, err, core.ErrCheckpointNotFound, "GetCheckpoint of alice's checkpoint as bob")
	list, err := st.ListSessions(bob, core.SessionFilter{})
	noErr(t, err, "ListSessions as bob")
	equal(t, "sessions bob lists", 0, len(list))
	ageOut(core.NowMillis())
	n, err := st.CleanupSessions(bob, core.CleanupOptions{OlderThan: cleanupWindow})
	noErr(t, err, "CleanupSessions as bob")
	equal(t, "sessions bob's cleanup deletes", 0, n)
	nobody := core.WithIdentity(bg, &core.AuthIdentity{})
	_, err = st.GetSession(nobody, "nobodys")
	isErr(t, err, core.ErrSessionNotFound, "GetSession as an identity without a subject")

	// Alice, the admin and a caller without an identity see it.
	for name, ctx := range map[string]context.Context{"alice": alice, "root": root, "no identity": bg} {
		_, err = st.GetSession(ctx, "alices")
		noErr(t, err, "GetSession as %s", name)
		msgs, err := st.GetMessages(ctx, "alices")
		noErr(t, err, "GetMessages as %s", name)
		equal(t, "messages "+name+" reads", 1, len(msgs))
		_, err = st.GetCheckpoint(ctx, "cp-alice")
		noErr(t, err, "GetCheckpoint as %s", name)
		noErr(t, st.CheckSession(ctx, "alices"), "CheckSession as %s", name)
	}
	list, err = st.ListSessions(alice, core.SessionFilter{})
	noErr(t, err, "ListSessions as alice")
	equalList(t, "sessions alice lists", []string{"alices"}, ids(list, sessionID))
	list, err = st.ListSessions(root, core.SessionFilter{})
	noErr(t, err, "ListSessions as root")
	sameSet(t, "sessions root lists", []string{"alices", "nobodys"}, ids(list, sessionID))
	noErr(t, st.DeleteSession(alice, "alices"), "DeleteSession as alice")
	noErr(t, st.DeleteSession(root, "nobodys"), "DeleteSession as root")
	_, err = s.GetSession(bg, "alices")
	isErr(t, err, core.ErrSessionNotFound, "alice's session after she deleted it")
}
