package protocol_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// benchFrames are the two frames that dominate a run's wire traffic: a small
// text:delta (one per streamed token chunk) and a tool:result carrying a
// nested JSON result built as Go values, the way a tool returns it.
func benchFrames() []struct {
	name  string
	frame core.Frame
} {
	const runID = "run_01J9Z3K7Q8X2VZC5M4N6P0R1ST"
	base := core.CrumbBase{AgentID: "support-triage", RunID: runID, SessionID: "sess_7f3c2a9e41b8", Timestamp: 1718035201456, Seq: 42}
	return []struct {
		name  string
		frame core.Frame
	}{
		{"text:delta", core.Frame{RunID: runID, Seq: 42, Crumb: &core.TextDelta{CrumbBase: base, Delta: "I've found the duplicate charge on "}}},
		{"tool:result", core.Frame{RunID: runID, Seq: 43, Crumb: &core.ToolResult{
			CrumbBase:  base,
			ToolCallID: "call_9aQ2xLm7Vt",
			ToolName:   "lookup_invoice",
			DurationMs: 374,
			Result: map[string]any{
				"invoice": map[string]any{
					"id":     "INV-4411",
					"total":  98.0,
					"paidAt": nil,
					"lines": []any{
						map[string]any{"sku": "PLAN-PRO", "qty": 1, "unitPrice": 49.0},
						map[string]any{"sku": "PLAN-PRO", "qty": 1, "unitPrice": 49.0},
					},
					"charges": []any{
						map[string]any{"id": "ch_1", "status": "succeeded", "amount": 4900},
						map[string]any{"id": "ch_2", "status": "succeeded", "amount": 4900},
					},
				},
			},
		}}},
	}
}

func BenchmarkProtocolEncode(b *testing.B) {
	for _, bf := range benchFrames() {
		b.Run(bf.name, func(b *testing.B) {
			enc := mustEncode(b, bf.frame)
			b.SetBytes(int64(len(enc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := protocol.EncodeCrumbFrame(bf.frame); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkProtocolDecode(b *testing.B) {
	for _, bf := range benchFrames() {
		b.Run(bf.name, func(b *testing.B) {
			enc := mustEncode(b, bf.frame)
			b.SetBytes(int64(len(enc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := protocol.Decode(enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
