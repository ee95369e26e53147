package core_test

import (
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
)

// BenchmarkSessionOwnersAddMessage is what the session ownership rule
// costs a run's writes: under it an identified caller's AddMessage reads
// the session first.
func BenchmarkSessionOwnersAddMessage(b *testing.B) {
	for _, c := range []struct {
		name string
		on   bool
	}{{"off", false}, {"on", true}} {
		b.Run(c.name, func(b *testing.B) {
			st := core.NewStorage(memory.New())
			if c.on {
				st.OwnSessions(core.SessionOwners{})
			}
			ctx := core.WithIdentity(b.Context(), &core.AuthIdentity{Subject: "alice"})
			if _, err := st.CreateSession(ctx, core.NewSession{ID: "s"}); err != nil {
				b.Fatal(err)
			}
			m := core.SessionMessage{Role: core.RoleUser, Content: json.RawMessage(`[{"type":"text","text":"hi"}]`)}
			b.ReportAllocs()
			for b.Loop() {
				if err := st.AddMessage(ctx, "s", m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
