package storetest

import (
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
)

func stateCases() []testCase {
	return []testCase{
		{name: "a fresh session has no state", needs: needsSessionState, run: testNoState},
		{name: "PutSessionState replaces the document, kept as written", needs: needsSessionState, run: testPutState},
		{name: "a null state removes the document", needs: needsSessionState, run: testClearState},
		{name: "the state of a missing session is ErrSessionNotFound", needs: needsSessionState, run: testStateMissing},
		{name: "PutSessionState touches UpdatedAt", needs: needsSessionState, run: testPutStateTouches},
		{name: "a state that is not JSON is VALIDATION_ERROR and changes nothing", needs: needsSessionState, run: testPutStateInvalid},
		{name: "states of sessions are kept apart and go with their session", needs: needsSessionState, run: testStatePerSession},
	}
}

// sessionState is the store's SessionStateStore, found as core.Storage
// finds it.
func sessionState(s core.BreadStore) core.SessionStateStore {
	var found core.SessionStateStore
	core.As(s, &found)
	return found
}

func testNoState(t *testing.T, s core.BreadStore) {
	sess := createSession(t, s, core.NewSession{})
	got, err := sessionState(s).GetSessionState(t.Context(), sess.ID)
	noErr(t, err, "GetSessionState")
	if got != nil {
		t.Errorf("the state of a fresh session: want nil, got %s", got)
	}
}

func testPutState(t *testing.T, s core.BreadStore) {
	st := sessionState(s)
	sess := createSession(t, s, core.NewSession{})
	for _, doc := range []string{
		`{"todos":[{"title":"milk","done":false}],"n":1.5,"s":"é\u2028"}`,
		`{"todos":[]}`,
		`[1,2,3]`,
		`"a string"`,
	} {
		noErr(t, st.PutSessionState(t.Context(), sess.ID, json.RawMessage(doc)), "PutSessionState(%s)", doc)
		got, err := st.GetSessionState(t.Context(), sess.ID)
		noErr(t, err, "GetSessionState")
		assertCompactEqual(t, "the state", []byte(doc), got)
	}
}

func testClearState(t *testing.T, s core.BreadStore) {
	st := sessionState(s)
	sess := createSession(t, s, core.NewSession{})
	for _, clear := range []json.RawMessage{json.RawMessage(`null`), json.RawMessage(" null\n"), nil} {
		noErr(t, st.PutSessionState(t.Context(), sess.ID, json.RawMessage(`{"a":1}`)), "PutSessionState")
		noErr(t, st.PutSessionState(t.Context(), sess.ID, clear), "PutSessionState(%q)", clear)
		got, err := st.GetSessionState(t.Context(), sess.ID)
		noErr(t, err, "GetSessionState")
		if got != nil {
			t.Errorf("the state after PutSessionState(%q): want nil, got %s", clear, got)
		}
	}
}

func testStateMissing(t *testing.T, s core.BreadStore) {
	st := sessionState(s)
	_, err := st.GetSessionState(t.Context(), "no-such-session")
	isErr(t, err, core.ErrSessionNotFound, "GetSessionState of a missing session")
	err = st.PutSessionState(t.Context(), "no-such-session", json.RawMessage(`{}`))
	isErr(t, err, core.ErrSessionNotFound, "PutSessionState of a missing session")
	if _, err := s.GetSession(t.Context(), "no-such-session"); err == nil {
		t.Error("PutSessionState of a missing session created it")
	}
}

func testPutStateTouches(t *testing.T, s core.BreadStore) {
	st := sessionState(s)
	sess := createSession(t, s, core.NewSession{})
	waitPast(sess.UpdatedAt + 1)
	before := core.NowMillis()
	noErr(t, st.PutSessionState(t.Context(), sess.ID, json.RawMessage(`{"a":1}`)), "PutSessionState")
	got, err := s.GetSession(t.Context(), sess.ID)
	noErr(t, err, "GetSession")
	if got.UpdatedAt < before {
		t.Errorf("UpdatedAt after PutSessionState is %d, want at least %d", got.UpdatedAt, before)
	}
}

func testStatePerSession(t *testing.T, s core.BreadStore) {
	st := sessionState(s)
	a := createSession(t, s, core.NewSession{})
	b := createSession(t, s, core.NewSession{})
	noErr(t, st.PutSessionState(t.Context(), a.ID, json.RawMessage(`{"who":"a"}`)), "PutSessionState(a)")
	noErr(t, st.PutSessionState(t.Context(), b.ID, json.RawMessage(`{"who":"b"}`)), "PutSessionState(b)")
	got, err := st.GetSessionState(t.Context(), a.ID)
	noErr(t, err, "GetSessionState(a)")
	assertCompactEqual(t, "the state of a", []byte(`{"who":"a"}`), got)
	noErr(t, s.DeleteSession(t.Context(), a.ID), "DeleteSession(a)")
	_, err = st.GetSessionState(t.Context(), a.ID)
	isErr(t, err, core.ErrSessionNotFound, "GetSessionState of a deleted session")
	got, err = st.GetSessionState(t.Context(), b.ID)
	noErr(t, err, "GetSessionState(b)")
	assertCompactEqual(t, "the state of b", []byte(`{"who":"b"}`), got)
	// A session made again under a deleted one's id starts without state.
	createSession(t, s, core.NewSession{ID: a.ID})
	got, err = st.GetSessionState(t.Context(), a.ID)
	noErr(t, err, "GetSessionState of a session made again")
	if got != nil {
		t.Errorf("a session made again under a deleted id: want no state, got %s", got)
	}
}

func testPutStateInvalid(t *testing.T, s core.BreadStore) {
	st := sessionState(s)
	sess := createSession(t, s, core.NewSession{})
	noErr(t, st.PutSessionState(t.Context(), sess.ID, json.RawMessage(`{"a":1}`)), "PutSessionState")
	err := st.PutSessionState(t.Context(), sess.ID, json.RawMessage(`{"a":`))
	isErr(t, err, core.ErrValidation, "PutSessionState of a value that is not JSON")
	got, err := st.GetSessionState(t.Context(), sess.ID)
	noErr(t, err, "GetSessionState")
	assertCompactEqual(t, "the state after a refused put", []byte(`{"a":1}`), got)
}
