package core_test

import (
	"encoding/json"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
)

// sessionUUID names the benchmark's session: under the rule a caller names
// a new session only with a random UUID.
const sessionUUID = "0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f0001"

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
			if _, err := st.CreateSession(ctx, core.NewSession{ID: sessionUUID}); err != nil {
				b.Fatal(err)
			}
			m := core.SessionMessage{Role: core.RoleUser, Content: json.RawMessage(`[{"type":"text","text":"hi"}]`)}
			b.ReportAllocs()
			for b.Loop() {
				if err := st.AddMessage(ctx, sessionUUID, m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
