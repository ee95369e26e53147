package storetest

import (
	"fmt"
	"testing"

	"github.com/breadai/bread/core"
)

func sessionCases() []testCase {
	return []testCase{
		{name: "CreateSession generates an id, timestamps and empty tags", run: testCreateSessionDefaults},
		{name: "CreateSession honours the caller's id, tags and agent", run: testCreateSessionGiven},
		{name: "GetSession round trip", run: testGetSessionRoundTrip},
		{name: "GetSession of an unknown id is ErrSessionNotFound", run: testGetSessionUnknown},
		{name: "ListSessions without a filter lists every session", run: testListSessionsAll},
		{name: "ListSessions requires every filter tag", run: testListSessionsTags},
		{name: "DeleteSession removes the session", run: testDeleteSession},
		{name: "DeleteSession of a missing id is not an error", run: testDeleteSessionMissing},
		{name: "CleanupSessions deletes by age", run: testCleanupByAge},
		{name: "CleanupSessions applies tags within the age window", run: testCleanupTags},
		{name: "CleanupSessions with zero OlderThan deletes nothing", run: testCleanupZeroAge},
		{name: "CleanupSessions measures age from the last update", run: testCleanupFromUpdate},
	}
}

func testCreateSessionDefaults(t *testing.T, s core.BreadStore) {
	before := core.NowMillis()
	a := createSession(t, s, core.NewSession{})
	b := createSession(t, s, core.NewSession{})
	after := core.NowMillis()
	if a.ID == "" || b.ID == "" || a.ID == b.ID {
		t.Errorf("generated ids must be non-empty and distinct, got %q and %q", a.ID, b.ID)
	}
	if a.CreatedAt < before || a.CreatedAt > after {
		t.Errorf("CreatedAt %d is not a Unix millisecond time within [%d, %d]", a.CreatedAt, before, after)
	}
	if a.UpdatedAt < a.CreatedAt {
		t.Errorf("UpdatedAt %d precedes CreatedAt %d", a.UpdatedAt, a.CreatedAt)
	}
	if a.Tags == nil {
		t.Error("Tags of a session created without tags is nil, want an empty map")
	}
	if len(a.Tags) != 0 {
		t.Errorf("Tags: want empty, got %v", a.Tags)
	}
	got, err := s.GetSession(t.Context(), a.ID)
	noErr(t, err, "GetSession")
	if got.Tags == nil {
		t.Error("GetSession: Tags is nil, want an empty map")
	}
	list, err := s.ListSessions(t.Context(), core.SessionFilter{})
	noErr(t, err, "ListSessions")
	for _, l := range list {
		if l.Tags == nil {
			t.Errorf("ListSessions: session %q has nil Tags, want an empty map", l.ID)
		}
	}
}

func testCreateSessionGiven(t *testing.T, s core.BreadStore) {
	tags := map[string]string{"env": "test", "team": "bakery", "unicode": "pâte 🍞"}
	sess := createSession(t, s, core.NewSession{ID: "fixed-id", Tags: tags, AgentID: "agent-a"})
	equal(t, "ID", "fixed-id", sess.ID)
	equal(t, "AgentID", "agent-a", sess.AgentID)
	assertJSONEqual(t, "Tags", tags, sess.Tags)
}

func testGetSessionRoundTrip(t *testing.T, s core.BreadStore) {
	made := createSession(t, s, core.NewSession{Tags: map[string]string{"k": "v"}, AgentID: "agent-a"})
	got, err := s.GetSession(t.Context(), made.ID)
	noErr(t, err, "GetSession")
	assertJSONEqual(t, "GetSession", made, got)
}

func testGetSessionUnknown(t *testing.T, s core.BreadStore) {
	_, err := s.GetSession(t.Context(), "no-such-session")
	isErr(t, err, core.ErrSessionNotFound, "GetSession of an unknown id")
}

func testListSessionsAll(t *testing.T, s core.BreadStore) {
	list, err := s.ListSessions(t.Context(), core.SessionFilter{})
	noErr(t, err, "ListSessions of an empty store")
	equal(t, "sessions in an empty store", 0, len(list))

	var want []string
	for i := range 5 {
		sess := createSession(t, s, core.NewSession{Tags: map[string]string{"i": fmt.Sprint(i)}})
		want = append(want, sess.ID)
	}
	list, err = s.ListSessions(t.Context(), core.SessionFilter{})
	noErr(t, err, "ListSessions")
	sameSet(t, "ListSessions", want, ids(list, sessionID))
}

func testListSessionsTags(t *testing.T, s core.BreadStore) {
	createSession(t, s, core.NewSession{ID: "ab", Tags: map[string]string{"a": "1", "b": "2"}})
	createSession(t, s, core.NewSession{ID: "a", Tags: map[string]string{"a": "1"}})
	createSession(t, s, core.NewSession{ID: "a2b", Tags: map[string]string{"a": "2", "b": "2"}})
	createSession(t, s, core.NewSession{ID: "none"})
	cases := []struct {
		filter map[string]string
		want   []string
	}{
		{nil, []string{"ab", "a", "a2b", "none"}},
		{map[string]string{}, []string{"ab", "a", "a2b", "none"}},
		{map[string]string{"a": "1"}, []string{"ab", "a"}},
		{map[string]string{"b": "2"}, []string{"ab", "a2b"}},
		{map[string]string{"a": "1", "b": "2"}, []string{"ab"}},
		{map[string]string{"a": "1", "b": "3"}, nil},
		{map[string]string{"missing": "x"}, nil},
		{map[string]string{"a": ""}, nil},
	}
	for _, c := range cases {
		list, err := s.ListSessions(t.Context(), core.SessionFilter{Tags: c.filter})
		noErr(t, err, "ListSessions(%v)", c.filter)
		sameSet(t, fmt.Sprintf("ListSessions(%v)", c.filter), c.want, ids(list, sessionID))
	}
}

func testDeleteSession(t *testing.T, s core.BreadStore) {
	doomed := createSession(t, s, core.NewSession{})
	kept := createSession(t, s, core.NewSession{})
	noErr(t, s.DeleteSession(t.Context(), doomed.ID), "DeleteSession")
	_, err := s.GetSession(t.Context(), doomed.ID)
	isErr(t, err, core.ErrSessionNotFound, "GetSession after DeleteSession")
	assertExists(t, s, kept.ID)
	list, err := s.ListSessions(t.Context(), core.SessionFilter{})
	noErr(t, err, "ListSessions")
	equalList(t, "ListSessions after DeleteSession", []string{kept.ID}, ids(list, sessionID))
}

func testDeleteSessionMissing(t *testing.T, s core.BreadStore) {
	noErr(t, s.DeleteSession(t.Context(), "no-such-session"), "DeleteSession of a missing id")
	sess := createSession(t, s, core.NewSession{})
	noErr(t, s.DeleteSession(t.Context(), sess.ID), "DeleteSession")
	noErr(t, s.DeleteSession(t.Context(), sess.ID), "DeleteSession of an already deleted id")
}

func testCleanupByAge(t *testing.T, s core.BreadStore) {
	old := createSession(t, s, core.NewSession{})
	ageOut(old.UpdatedAt)
	fresh := createSession(t, s, core.NewSession{})
	n, err := s.CleanupSessions(t.Context(), core.CleanupOptions{OlderThan: cleanupWindow})
	noErr(t, err, "CleanupSessions")
	_, err = s.GetSession(t.Context(), old.ID)
	isErr(t, err, core.ErrSessionNotFound, "GetSession of a session older than the window")
	if !stillFresh(fresh.UpdatedAt) {
		t.Logf("the machine stalled past the cleanup window; not checking the fresh session")
		return
	}
	equal(t, "CleanupSessions count", 1, n)
	assertExists(t, s, fresh.ID)
}

func testCleanupTags(t *testing.T, s core.BreadStore) {
	doomed := createSession(t, s, core.NewSession{Tags: map[string]string{"env": "a", "team": "x"}})
	spared := createSession(t, s, core.NewSession{Tags: map[string]string{"env": "b", "team": "x"}})
	partial := createSession(t, s, core.NewSession{Tags: map[string]string{"env": "a"}})
	ageOut(max(doomed.UpdatedAt, spared.UpdatedAt, partial.UpdatedAt))
	fresh := createSession(t, s, core.NewSession{Tags: map[string]string{"env": "a", "team": "x"}})
	n, err := s.CleanupSessions(t.Context(), core.CleanupOptions{
		OlderThan: cleanupWindow,
		Tags:      map[string]string{"env": "a", "team": "x"},
	})
	noErr(t, err, "CleanupSessions")
	_, err = s.GetSession(t.Context(), doomed.ID)
	isErr(t, err, core.ErrSessionNotFound, "old session carrying every tag")
	assertExists(t, s, spared.ID)
	assertExists(t, s, partial.ID)
	if !stillFresh(fresh.UpdatedAt) {
		t.Logf("the machine stalled past the cleanup window; not checking the fresh session")
		return
	}
	equal(t, "CleanupSessions count", 1, n)
	assertExists(t, s, fresh.ID)
}

func testCleanupZeroAge(t *testing.T, s core.BreadStore) {
	a := createSession(t, s, core.NewSession{Tags: map[string]string{"env": "test"}})
	createSession(t, s, core.NewSession{})
	waitPast(a.UpdatedAt + 2)
	for _, opts := range []core.CleanupOptions{
		{Tags: map[string]string{"env": "test"}},
		{},
		{OlderThan: -cleanupWindow},
	} {
		n, err := s.CleanupSessions(t.Context(), opts)
		noErr(t, err, "CleanupSessions(%+v)", opts)
		equal(t, fmt.Sprintf("CleanupSessions(%+v) count", opts), 0, n)
	}
	list, err := s.ListSessions(t.Context(), core.SessionFilter{})
	noErr(t, err, "ListSessions")
	equal(t, "sessions left", 2, len(list))
}

func testCleanupFromUpdate(t *testing.T, s core.BreadStore) {
	idle := createSession(t, s, core.NewSession{})
	active := createSession(t, s, core.NewSession{})
	ageOut(max(idle.UpdatedAt, active.UpdatedAt))
	noErr(t, s.AddMessage(t.Context(), active.ID, textMessage(core.RoleUser, "still here", core.NowMillis())), "AddMessage")
	touched, err := s.GetSession(t.Context(), active.ID)
	noErr(t, err, "GetSession")
	n, err := s.CleanupSessions(t.Context(), core.CleanupOptions{OlderThan: cleanupWindow})
	noErr(t, err, "CleanupSessions")
	_, err = s.GetSession(t.Context(), idle.ID)
	isErr(t, err, core.ErrSessionNotFound, "idle session")
	if !stillFresh(touched.UpdatedAt) {
		t.Logf("the machine stalled past the cleanup window; not checking the active session")
		return
	}
	equal(t, "CleanupSessions count", 1, n)
	assertExists(t, s, active.ID)
}
