package teststores_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/teststores"
)

// TestEachStoreIsFreshAndKeeps: every store opens empty, keeps a session,
// and two opens of one kind share nothing (a PostgreSQL schema, a MySQL database each).
func TestEachStoreIsFreshAndKeeps(t *testing.T) {
	var names []string
	teststores.Each(t, func(t *testing.T, s teststores.Store) {
		names = append(names, s.Name)
		a, b := s.Open(t), s.Open(t)
		if _, err := a.CreateSession(t.Context(), core.NewSession{ID: "s1", AgentID: "x"}); err != nil {
			t.Fatal(err)
		}
		if got, err := a.GetSession(t.Context(), "s1"); err != nil || got.ID != "s1" {
			t.Fatalf("GetSession = %+v, %v", got, err)
		}
		if _, err := b.GetSession(t.Context(), "s1"); err == nil {
			t.Fatal("a second store of the same kind sees the first one's session")
		}
	})
	if len(names) != 4 {
		t.Fatalf("stores %v, want memory, sqlite, postgres and mysql", names)
	}
}
