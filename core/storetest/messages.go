package storetest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/breadai/bread/core"
)

func messageCases() []testCase {
	return []testCase{
		{name: "a fresh session has no messages", run: testNoMessages},
		{name: "AddMessage appends in order and assigns ids", run: testAddMessageOrder},
		{name: "messages added within one millisecond keep their order", run: testMessagesSameTick},
		{name: "content is kept byte for byte", run: testMessageContentBytes},
		{name: "AddMessage to a missing session is ErrSessionNotFound", run: testAddMessageMissing},
		{name: "AddMessage touches UpdatedAt", run: testAddMessageTouches},
		{name: "messages of sessions are kept apart", run: testMessagesPerSession},
		{name: "DeleteMessages removes exactly the named messages of its session", needs: needsMessageDelete, run: testDeleteMessages},
	}
}

func testNoMessages(t *testing.T, s core.BreadStore) {
	sess := createSession(t, s, core.NewSession{})
	msgs, err := s.GetMessages(t.Context(), sess.ID)
	noErr(t, err, "GetMessages")
	equal(t, "messages of a fresh session", 0, len(msgs))
}

func testAddMessageOrder(t *testing.T, s core.BreadStore) {
	sess := createSession(t, s, core.NewSession{})
	want := []core.SessionMessage{
		textMessage(core.RoleSystem, "be brief", baseTime),
		textMessage(core.RoleUser, "hi", baseTime+1),
		textMessage(core.RoleAssistant, "yo", baseTime+2),
		message(core.RoleTool, `[{"type":"tool-result","toolCallId":"tc-1","output":{"type":"text","value":"ok"}}]`, baseTime+3),
	}
	for _, m := range want {
		noErr(t, s.AddMessage(t.Context(), sess.ID, m), "AddMessage(%s)", m.Role)
	}
	got, err := s.GetMessages(t.Context(), sess.ID)
	noErr(t, err, "GetMessages")
	if len(got) != len(want) {
		t.Fatalf("GetMessages: want %d messages, got %d", len(want), len(got))
	}
	seen := map[string]bool{}
	for i, g := range got {
		w := want[i]
		equal(t, fmt.Sprintf("message %d role", i), w.Role, g.Role)
		equal(t, fmt.Sprintf("message %d timestamp", i), w.Timestamp, g.Timestamp)
		equal(t, fmt.Sprintf("message %d session", i), sess.ID, g.SessionID)
		assertCompactEqual(t, fmt.Sprintf("message %d content", i), w.Content, g.Content)
		if g.ID == "" || seen[g.ID] {
			t.Errorf("message %d: id %q is empty or repeated", i, g.ID)
		}
		seen[g.ID] = true
	}
}

func testMessagesSameTick(t *testing.T, s core.BreadStore) {
	sess := createSession(t, s, core.NewSession{})
	const n = 100
	ts := core.NowMillis()
	for i := range n {
		noErr(t, s.AddMessage(t.Context(), sess.ID, textMessage(core.RoleAssistant, fmt.Sprint(i), ts)), "AddMessage %d", i)
	}
	got, err := s.GetMessages(t.Context(), sess.ID)
	noErr(t, err, "GetMessages")
	if len(got) != n {
		t.Fatalf("GetMessages: want %d messages, got %d", n, len(got))
	}
	for i, g := range got {
		var text string
		if err := json.Unmarshal(g.Content, &text); err != nil || text != fmt.Sprint(i) {
			t.Fatalf("message at position %d holds %s: messages with one timestamp lost their order", i, g.Content)
		}
	}
}

func testMessageContentBytes(t *testing.T, s core.BreadStore) {
	sess := createSession(t, s, core.NewSession{})
	contents := []string{
		`"plain text"`,
		`[{"type":"text","text":"héllo 世界 🍞"},{"type":"tool-call","toolCallId":"tc-1","toolName":"lookup","input":{"q":"x","n":12345678901234567890}}]`,
		bigPayload,
		"{\n  \"spaced\" : [ 1 , 2.50 ,\t3e10 ]\n}",
		`{"z":1,"a":2,"longer key":3,"b":{}}`,
		`null`,
		`12345678901234567890`,
	}
	for _, c := range contents {
		noErr(t, s.AddMessage(t.Context(), sess.ID, message(core.RoleAssistant, c, baseTime)), "AddMessage(%s)", c)
	}
	got, err := s.GetMessages(t.Context(), sess.ID)
	noErr(t, err, "GetMessages")
	if len(got) != len(contents) {
		t.Fatalf("GetMessages: want %d messages, got %d", len(contents), len(got))
	}
	for i, c := range contents {
		assertCompactEqual(t, fmt.Sprintf("content %d", i), []byte(c), got[i].Content)
	}
}

func testAddMessageMissing(t *testing.T, s core.BreadStore) {
	err := s.AddMessage(t.Context(), "no-such-session", textMessage(core.RoleUser, "hi", baseTime))
	isErr(t, err, core.ErrSessionNotFound, "AddMessage to a missing session")
	_, err = s.GetSession(t.Context(), "no-such-session")
	isErr(t, err, core.ErrSessionNotFound, "AddMessage must not create the session")
	assertNoMessages(t, s, "no-such-session")
}

func testAddMessageTouches(t *testing.T, s core.BreadStore) {
	sess := createSession(t, s, core.NewSession{})
	waitPast(sess.UpdatedAt + 1)
	before := core.NowMillis()
	// The message's own timestamp is the caller's business; touching means now.
	noErr(t, s.AddMessage(t.Context(), sess.ID, textMessage(core.RoleUser, "hi", baseTime)), "AddMessage")
	got, err := s.GetSession(t.Context(), sess.ID)
	noErr(t, err, "GetSession")
	if got.UpdatedAt < before {
		t.Errorf("UpdatedAt after AddMessage is %d, want at least %d (the session was created at %d)", got.UpdatedAt, before, sess.UpdatedAt)
	}
	equal(t, "CreatedAt after AddMessage", sess.CreatedAt, got.CreatedAt)
}

func testMessagesPerSession(t *testing.T, s core.BreadStore) {
	a := createSession(t, s, core.NewSession{})
	b := createSession(t, s, core.NewSession{})
	noErr(t, s.AddMessage(t.Context(), a.ID, textMessage(core.RoleUser, "to a", baseTime)), "AddMessage a")
	noErr(t, s.AddMessage(t.Context(), b.ID, textMessage(core.RoleUser, "to b", baseTime)), "AddMessage b")
	noErr(t, s.AddMessage(t.Context(), a.ID, textMessage(core.RoleAssistant, "from a", baseTime)), "AddMessage a")
	for id, want := range map[string][]string{a.ID: {`"to a"`, `"from a"`}, b.ID: {`"to b"`}} {
		got, err := s.GetMessages(t.Context(), id)
		noErr(t, err, "GetMessages(%s)", id)
		var contents []string
		for _, m := range got {
			contents = append(contents, string(compact(m.Content)))
		}
		equalList(t, "messages of "+id, want, contents)
	}
}

// testDeleteMessages checks core.MessageDeleter: the
// named messages go, the others keep their order, and ids of another
// session, unknown ids and a missing session remove nothing.
func testDeleteMessages(t *testing.T, s core.BreadStore) {
	del := capability[core.MessageDeleter](t, s)
	a := createSession(t, s, core.NewSession{})
	b := createSession(t, s, core.NewSession{})
	for i := range 4 {
		noErr(t, s.AddMessage(t.Context(), a.ID, textMessage(core.RoleUser, fmt.Sprintf("a%d", i), baseTime+int64(i))), "AddMessage a")
	}
	noErr(t, s.AddMessage(t.Context(), b.ID, textMessage(core.RoleUser, "b0", baseTime)), "AddMessage b")
	am, err := s.GetMessages(t.Context(), a.ID)
	noErr(t, err, "GetMessages a")
	bm, err := s.GetMessages(t.Context(), b.ID)
	noErr(t, err, "GetMessages b")

	n, err := del.DeleteMessages(t.Context(), a.ID, []string{bm[0].ID, "no-such-id", "nul\x00id"})
	noErr(t, err, "DeleteMessages with foreign ids")
	equal(t, "removed by foreign and unknown ids", 0, n)
	n, err = del.DeleteMessages(t.Context(), "no-such-session", []string{am[0].ID})
	noErr(t, err, "DeleteMessages on a missing session")
	equal(t, "removed from a missing session", 0, n)

	n, err = del.DeleteMessages(t.Context(), a.ID, []string{am[1].ID, am[3].ID})
	noErr(t, err, "DeleteMessages")
	equal(t, "removed", 2, n)
	got, err := s.GetMessages(t.Context(), a.ID)
	noErr(t, err, "GetMessages a after delete")
	if len(got) != 2 || got[0].ID != am[0].ID || got[1].ID != am[2].ID {
		t.Fatalf("after deleting messages 1 and 3, want messages 0 and 2 in order, got %d messages", len(got))
	}
	still, err := s.GetMessages(t.Context(), b.ID)
	noErr(t, err, "GetMessages b after delete")
	equal(t, "messages of the other session", 1, len(still))
	noErr(t, s.AddMessage(t.Context(), a.ID, textMessage(core.RoleUser, "a4", baseTime+9)), "AddMessage after delete")
	got, err = s.GetMessages(t.Context(), a.ID)
	noErr(t, err, "GetMessages a after append")
	equal(t, "messages after a later append", 3, len(got))
}
