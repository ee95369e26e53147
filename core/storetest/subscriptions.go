package storetest

import (
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
)

func subscriptionCases() []testCase {
	return []testCase{
		{name: "a run without subscriptions lists none", needs: needsRunSubscriptions, run: testNoSubscriptions},
		{name: "subscriptions list in the order first put; a put of the same id replaces in place", needs: needsRunSubscriptions, run: testPutSubscriptions},
		{name: "DeleteRunSubscription removes one; DeleteRunSubscriptions the rest", needs: needsRunSubscriptions, run: testDeleteSubscriptions},
		{name: "a subscription of a missing session is ErrSessionNotFound", needs: needsRunSubscriptions, run: testSubscriptionMissingSession},
		{name: "subscriptions go with their session", needs: needsRunSubscriptions, run: testSubscriptionsGoWithTheirSession},
	}
}

// subscriptions is the store's RunSubscriptionStore, found as core.Storage
// finds it.
func subscriptions(s core.BreadStore) core.RunSubscriptionStore {
	var found core.RunSubscriptionStore
	core.As(s, &found)
	return found
}

// subIDs lists the run's subscriptions as "id=config" strings.
func subIDs(t *testing.T, st core.RunSubscriptionStore, runID string) []string {
	t.Helper()
	list, err := st.ListRunSubscriptions(t.Context(), runID)
	noErr(t, err, "ListRunSubscriptions(%s)", runID)
	if list == nil {
		t.Errorf("ListRunSubscriptions(%s) = nil, want an empty list", runID)
	}
	out := []string{}
	for _, sub := range list {
		if sub.RunID != runID || sub.SessionID == "" || sub.CreatedAt == 0 {
			t.Errorf("subscription %+v: want run %s, its session and a creation time", sub, runID)
		}
		var v any
		if err := json.Unmarshal(sub.Config, &v); err != nil {
			t.Errorf("subscription %s: config %q is not JSON", sub.ID, sub.Config)
		}
		b, _ := json.Marshal(v)
		out = append(out, sub.ID+"="+string(b))
	}
	return out
}

func sameList(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: got %q, want %q", what, got, want)
		}
	}
}

func putSub(t *testing.T, st core.RunSubscriptionStore, session, run, id, config string) {
	t.Helper()
	noErr(t, st.PutRunSubscription(t.Context(), core.RunSubscription{RunID: run, ID: id, SessionID: session, Config: json.RawMessage(config)}), "PutRunSubscription(%s, %s)", run, id)
}

func testNoSubscriptions(t *testing.T, s core.BreadStore) {
	sameList(t, "a run never subscribed to", subIDs(t, subscriptions(s), "run-none"))
}

func testPutSubscriptions(t *testing.T, s core.BreadStore) {
	st := subscriptions(s)
	sess := createSession(t, s, core.NewSession{})
	putSub(t, st, sess.ID, "run-a", "push-b", `{"url":"https://b.example","token":"é\u2028"}`)
	putSub(t, st, sess.ID, "run-a", "push-a", `{"url":"https://a.example"}`)
	putSub(t, st, sess.ID, "run-other", "push-a", `{"url":"https://other.example"}`)
	sameList(t, "after two puts", subIDs(t, st, "run-a"), `push-b={"token":"é\u2028","url":"https://b.example"}`, `push-a={"url":"https://a.example"}`)
	putSub(t, st, sess.ID, "run-a", "push-b", `{"url":"https://b2.example"}`)
	sameList(t, "after push-b was replaced", subIDs(t, st, "run-a"), `push-b={"url":"https://b2.example"}`, `push-a={"url":"https://a.example"}`)
	sameList(t, "another run", subIDs(t, st, "run-other"), `push-a={"url":"https://other.example"}`)
}

func testDeleteSubscriptions(t *testing.T, s core.BreadStore) {
	st := subscriptions(s)
	sess := createSession(t, s, core.NewSession{})
	for _, id := range []string{"p1", "p2", "p3"} {
		putSub(t, st, sess.ID, "run-d", id, `{}`)
	}
	putSub(t, st, sess.ID, "run-kept", "p1", `{}`)
	ok, err := st.DeleteRunSubscription(t.Context(), "run-d", "p2")
	noErr(t, err, "DeleteRunSubscription")
	if !ok {
		t.Error("DeleteRunSubscription(p2) reported it was not there")
	}
	ok, err = st.DeleteRunSubscription(t.Context(), "run-d", "p2")
	noErr(t, err, "DeleteRunSubscription again")
	if ok {
		t.Error("DeleteRunSubscription(p2) twice reported it was there")
	}
	sameList(t, "after deleting p2", subIDs(t, st, "run-d"), "p1={}", "p3={}")
	n, err := st.DeleteRunSubscriptions(t.Context(), "run-d")
	noErr(t, err, "DeleteRunSubscriptions")
	if n != 2 {
		t.Errorf("DeleteRunSubscriptions removed %d, want 2", n)
	}
	sameList(t, "after deleting all", subIDs(t, st, "run-d"))
	sameList(t, "another run", subIDs(t, st, "run-kept"), "p1={}")
	if n, err = st.DeleteRunSubscriptions(t.Context(), "run-d"); err != nil || n != 0 {
		t.Errorf("DeleteRunSubscriptions of none = %d, %v; want 0, nil", n, err)
	}
}

func testSubscriptionMissingSession(t *testing.T, s core.BreadStore) {
	st := subscriptions(s)
	err := st.PutRunSubscription(t.Context(), core.RunSubscription{RunID: "run-m", ID: "p1", SessionID: "no-such-session", Config: json.RawMessage(`{}`)})
	if !isCode(err, core.CodeSessionNotFound) {
		t.Errorf("PutRunSubscription on a missing session: want SESSION_NOT_FOUND, got %v", err)
	}
	sameList(t, "after the refused put", subIDs(t, st, "run-m"))
}

func testSubscriptionsGoWithTheirSession(t *testing.T, s core.BreadStore) {
	st := subscriptions(s)
	gone := createSession(t, s, core.NewSession{})
	kept := createSession(t, s, core.NewSession{})
	putSub(t, st, gone.ID, "run-gone", "p1", `{}`)
	putSub(t, st, kept.ID, "run-kept", "p1", `{}`)
	noErr(t, s.DeleteSession(t.Context(), gone.ID), "DeleteSession")
	sameList(t, "the deleted session's run", subIDs(t, st, "run-gone"))
	sameList(t, "the other session's run", subIDs(t, st, "run-kept"), "p1={}")
}
