package storetest

import (
	"fmt"
	"testing"

	"github.com/breadai/bread/core"
)

func knowledgeCases() []testCase {
	return []testCase{
		{name: "add and query nodes", needs: needsKnowledge, run: testKnowledgeAddQuery},
		{name: "QueryKnowledge matches labels case-insensitively within the agent", needs: needsKnowledge, run: testKnowledgeMatch},
		{name: "QueryKnowledge is newest first with a default limit of 10", needs: needsKnowledge, run: testKnowledgeLimit},
		{name: "ForgetKnowledge removes a node and its edges", needs: needsKnowledge, run: testKnowledgeForget},
		{name: "KnowledgeContext is scoped by agent and session, newest first", needs: needsKnowledge, run: testKnowledgeContext},
	}
}

// addNode adds a node or stops the case.
func addNode(t *testing.T, ks core.KnowledgeStore, agent, session, label string, data map[string]any) core.KnowledgeNode {
	t.Helper()
	n, err := ks.AddKnowledgeNode(t.Context(), core.NewKnowledgeNode{AgentID: agent, SessionID: session, Label: label, Data: data})
	noErr(t, err, "AddKnowledgeNode(%s)", label)
	return n
}

// queryLabels returns the labels QueryKnowledge finds.
func queryLabels(t *testing.T, ks core.KnowledgeStore, q core.KnowledgeQuery) []string {
	t.Helper()
	nodes, err := ks.QueryKnowledge(t.Context(), q)
	noErr(t, err, "QueryKnowledge(%+v)", q)
	return ids(nodes, nodeLabel)
}

func testKnowledgeAddQuery(t *testing.T, s core.BreadStore) {
	ks := capability[core.KnowledgeStore](t, s)
	data := map[string]any{"role": "engineer", "born": 1815.0, "notes": []any{"analytical engine", map[string]any{"with": "Babbage"}}}
	ada := addNode(t, ks, "a", "s", "Ada Lovelace", data)
	if ada.ID == "" {
		t.Fatal("AddKnowledgeNode returned no id")
	}
	equal(t, "Label", "Ada Lovelace", ada.Label)
	assertJSONEqual(t, "Data returned by AddKnowledgeNode", data, ada.Data)
	other := addNode(t, ks, "a", "s", "Charles Babbage", nil)
	if other.ID == ada.ID {
		t.Errorf("two nodes share the id %q", ada.ID)
	}
	nodes, err := ks.QueryKnowledge(t.Context(), core.KnowledgeQuery{AgentID: "a", Query: "Ada"})
	noErr(t, err, "QueryKnowledge")
	if len(nodes) != 1 {
		t.Fatalf("QueryKnowledge(Ada): want 1 node, got %d", len(nodes))
	}
	equal(t, "found id", ada.ID, nodes[0].ID)
	equal(t, "found label", ada.Label, nodes[0].Label)
	assertJSONEqual(t, "found data", data, nodes[0].Data)
}

func testKnowledgeMatch(t *testing.T, s core.BreadStore) {
	ks := capability[core.KnowledgeStore](t, s)
	addNode(t, ks, "a", "s1", "Ada Lovelace", nil)
	nextMillisecond()
	addNode(t, ks, "a", "s2", "Lovelace Family", nil)
	nextMillisecond()
	addNode(t, ks, "a", "s1", "Babbage", nil)
	nextMillisecond()
	addNode(t, ks, "other", "s1", "Ada Byron", nil)
	cases := []struct {
		q    core.KnowledgeQuery
		want []string
	}{
		{core.KnowledgeQuery{AgentID: "a", Query: "ada"}, []string{"Ada Lovelace"}},
		{core.KnowledgeQuery{AgentID: "a", Query: "LOVELACE"}, []string{"Lovelace Family", "Ada Lovelace"}},
		{core.KnowledgeQuery{AgentID: "a", Query: "bab"}, []string{"Babbage"}},
		{core.KnowledgeQuery{AgentID: "other", Query: "ada"}, []string{"Ada Byron"}},
		{core.KnowledgeQuery{AgentID: "a", Query: "Byron"}, nil},
		{core.KnowledgeQuery{AgentID: "nobody", Query: "ada"}, nil},
		{core.KnowledgeQuery{AgentID: "a", Query: "zzz"}, nil},
	}
	for _, c := range cases {
		equalList(t, fmt.Sprintf("QueryKnowledge(%+v)", c.q), c.want, queryLabels(t, ks, c.q))
	}
}

func testKnowledgeLimit(t *testing.T, s core.BreadStore) {
	ks := capability[core.KnowledgeStore](t, s)
	var newestFirst []string
	for i := range 12 {
		label := fmt.Sprintf("fact %02d", i)
		addNode(t, ks, "a", "s", label, map[string]any{"i": float64(i)})
		newestFirst = append([]string{label}, newestFirst...)
		nextMillisecond()
	}
	equalList(t, "QueryKnowledge with the default limit", newestFirst[:10],
		queryLabels(t, ks, core.KnowledgeQuery{AgentID: "a", Query: "fact"}))
	equalList(t, "QueryKnowledge with limit 3", newestFirst[:3],
		queryLabels(t, ks, core.KnowledgeQuery{AgentID: "a", Query: "FACT", Limit: 3}))
	equalList(t, "QueryKnowledge with limit 50", newestFirst,
		queryLabels(t, ks, core.KnowledgeQuery{AgentID: "a", Query: "fact", Limit: 50}))
}

func testKnowledgeForget(t *testing.T, s core.BreadStore) {
	ks := capability[core.KnowledgeStore](t, s)
	ada := addNode(t, ks, "a", "s", "Ada", nil)
	babbage := addNode(t, ks, "a", "s", "Babbage", nil)
	menabrea := addNode(t, ks, "a", "s", "Menabrea", nil)
	noErr(t, ks.AddKnowledgeEdge(t.Context(), core.KnowledgeEdge{FromID: ada.ID, ToID: babbage.ID, Relation: "knows"}), "AddKnowledgeEdge")
	noErr(t, ks.AddKnowledgeEdge(t.Context(), core.KnowledgeEdge{FromID: menabrea.ID, ToID: ada.ID, Relation: "translated by"}), "AddKnowledgeEdge")

	// Edges are not readable through the port; a store that kept them would
	// typically refuse the delete (a foreign key) or trip over them later.
	gone, err := ks.ForgetKnowledge(t.Context(), ada.ID)
	noErr(t, err, "ForgetKnowledge of a node with edges both ways")
	equal(t, "ForgetKnowledge of an existing node", true, gone)
	gone, err = ks.ForgetKnowledge(t.Context(), ada.ID)
	noErr(t, err, "ForgetKnowledge again")
	equal(t, "ForgetKnowledge of a forgotten node", false, gone)
	gone, err = ks.ForgetKnowledge(t.Context(), "no-such-node")
	noErr(t, err, "ForgetKnowledge of an unknown id")
	equal(t, "ForgetKnowledge of an unknown id", false, gone)

	equal(t, "nodes matching Ada", 0, len(queryLabels(t, ks, core.KnowledgeQuery{AgentID: "a", Query: "Ada"})))
	equalList(t, "the other endpoint", []string{"Babbage"}, queryLabels(t, ks, core.KnowledgeQuery{AgentID: "a", Query: "babbage"}))
	for _, n := range []core.KnowledgeNode{babbage, menabrea} {
		gone, err = ks.ForgetKnowledge(t.Context(), n.ID)
		noErr(t, err, "ForgetKnowledge(%s) after its edge's other end went", n.Label)
		equal(t, "ForgetKnowledge("+n.Label+")", true, gone)
	}
}

func testKnowledgeContext(t *testing.T, s core.BreadStore) {
	ks := capability[core.KnowledgeStore](t, s)
	var want []string
	for i := range 4 {
		label := fmt.Sprintf("in s1 %d", i)
		addNode(t, ks, "a", "s1", label, nil)
		want = append([]string{label}, want...)
		nextMillisecond()
	}
	addNode(t, ks, "a", "s2", "in s2", nil)
	addNode(t, ks, "b", "s1", "other agent", nil)

	ctxLabels := func(agent, session string, limit int) []string {
		nodes, err := ks.KnowledgeContext(t.Context(), agent, session, limit)
		noErr(t, err, "KnowledgeContext(%s, %s, %d)", agent, session, limit)
		return ids(nodes, nodeLabel)
	}
	equalList(t, "KnowledgeContext(a, s1)", want, ctxLabels("a", "s1", 0))
	equalList(t, "KnowledgeContext(a, s1, limit 2)", want[:2], ctxLabels("a", "s1", 2))
	equalList(t, "KnowledgeContext(a, s2)", []string{"in s2"}, ctxLabels("a", "s2", 0))
	equalList(t, "KnowledgeContext(b, s1)", []string{"other agent"}, ctxLabels("b", "s1", -1))
	equal(t, "KnowledgeContext(b, s2)", 0, len(ctxLabels("b", "s2", 0)))
}
