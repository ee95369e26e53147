package storetest

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/breadai/bread/core"
)

// bigPayload is JSON every store must keep exactly: an integer beyond
// float64 precision, key order that a sorting store would change, unicode,
// escapes and HTML characters an encoder might escape.
const bigPayload = `{"zeta":12345678901234567890,"alpha":{"neg":-9007199254740993,"pi":3.14159265358979323846,` +
	`"tiny":1e-300,"text":"pain \"de\" campagne\n— 世界 🍞","html":"<b>&amp;</b>","list":[true,false,null,[],{}]}}`

// baseTime is a fixed timestamp (2023-11-14) for records whose times the
// caller supplies.
const baseTime int64 = 1_700_000_000_000

// createSession creates a session or stops the case.
func createSession(t testing.TB, s core.BreadStore, ns core.NewSession) core.Session {
	t.Helper()
	sess, err := s.CreateSession(t.Context(), ns)
	noErr(t, err, "CreateSession(%+v)", ns)
	return sess
}

// message builds a message with raw JSON content.
func message(role core.MessageRole, content string, ts int64) core.SessionMessage {
	return core.SessionMessage{Role: role, Content: json.RawMessage(content), Timestamp: ts}
}

// textMessage builds a message whose content is a JSON string.
func textMessage(role core.MessageRole, text string, ts int64) core.SessionMessage {
	b, _ := json.Marshal(text)
	return core.SessionMessage{Role: role, Content: b, Timestamp: ts}
}

// turnMessages are the messages one run turn writes: the user's input, the
// assistant's tool call, the tool's result and the assistant's answer.
func turnMessages(ts int64) []core.SessionMessage {
	return []core.SessionMessage{
		message(core.RoleUser, `[{"type":"text","text":"what is the weather in Turin?"}]`, ts),
		message(core.RoleAssistant, `[{"type":"text","text":"checking"},{"type":"tool-call","toolCallId":"tc-1","toolName":"weather","input":{"city":"Turin","days":3}}]`, ts),
		message(core.RoleTool, `[{"type":"tool-result","toolCallId":"tc-1","toolName":"weather","output":{"type":"json","value":{"tempC":21.5,"sky":"clear"}}}]`, ts),
		message(core.RoleAssistant, `[{"type":"text","text":"21.5°C and clear."}]`, ts),
	}
}

// checkpoint builds a minimal checkpoint of a session.
func checkpoint(id, sessionID string, createdAt int64) core.CheckpointRecord {
	return core.CheckpointRecord{
		ID:         id,
		AgentID:    "agent-a",
		RunID:      "run-" + id,
		SessionID:  sessionID,
		ToolName:   "ask_human",
		ToolCallID: "tc-" + id,
		Schema:     json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`),
		CreatedAt:  createdAt,
	}
}

// fullCheckpoint builds a checkpoint with every field set, its parent a
// pipeline nested in a supervisor's delegation.
func fullCheckpoint(id, sessionID string) core.CheckpointRecord {
	cp := checkpoint(id, sessionID, baseTime)
	cp.Prompt = "Approve the refund?"
	cp.Kind = core.HumanApproval
	cp.Skill = "refunds"
	cp.Set = &core.HumanSet{ID: "set-" + id, CheckpointIDs: []string{id, id + "-sibling"}}
	// A claim that lapsed before baseTime: the record round-trips it, and a
	// claim at baseTime wins over it.
	cp.ClaimedBy, cp.ClaimedUntil = "replica-z", baseTime-1
	cp.Meta = map[string]string{"otel.traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "x.empty": ""}
	cp.Parent = &core.CheckpointParent{
		Kind:          core.ParentPipeline,
		PipelineID:    "pipe-1",
		PipelineRunID: "run-pipe-1",
		StepIndex:     2,
		StepAgentID:   "parallel",
		RemainingSteps: []core.PipelineStep{
			{Type: core.StepAgent, AgentID: "writer", Skill: "short"},
			{Type: core.StepParallel, Steps: []core.PipelineStep{
				{Type: core.StepAgent, AgentID: "a"},
				{Type: core.StepMap, AgentID: "b"},
			}},
			{Type: core.StepRoute, Decider: "router", Routes: map[string]string{"yes": "approver", "no": "rejecter"}},
		},
		Map: &core.MapProgress{
			AgentID:        "mapper",
			SettledOutputs: []json.RawMessage{json.RawMessage(`{"n":1}`), json.RawMessage(bigPayload)},
			RemainingItems: []json.RawMessage{json.RawMessage(`"item-3"`), json.RawMessage(`4`)},
		},
		Parallel: &core.ParallelProgress{BranchIndex: 1, Branches: 2, JoinID: "pipe-run:1"},
		// Only loop links carry Loop; the fixture sets every field to prove
		// the store keeps it.
		Loop: &core.LoopProgress{LoopID: "loop-0", Iteration: 1, StartedAt: baseTime},
		Outer: &core.CheckpointParent{
			Kind:         core.ParentSupervisor,
			CheckpointID: "cp-supervisor",
			ToolCallID:   "tc-delegate",
			Outer: &core.CheckpointParent{
				Kind:       core.ParentPipeline,
				PipelineID: "outer-pipe",
				StepIndex:  0,
				Outer: &core.CheckpointParent{
					Kind:         core.ParentLoop,
					CheckpointID: "cp-host",
					ToolCallID:   "tc-loop",
					Loop:         &core.LoopProgress{LoopID: "loop-1", Iteration: 2, Input: json.RawMessage(`{"feedback":"shorter"}`), StartedAt: baseTime},
				},
			},
		},
	}
	cp.Pending = []core.PendingDelegation{{ToolCallID: "tc-loop", ToolName: "core_iterate_loop", ChildCheckpointID: "cp-child", SubAgentID: "drafter"}}
	return cp
}

// loop builds a running loop of a session.
func loop(id, sessionID string, startedAt int64) core.LoopRecord {
	return core.LoopRecord{
		ID:            id,
		AgentID:       "agent-a",
		SessionID:     sessionID,
		RunID:         "run-" + id,
		Pool:          []string{"agent-a", "agent-b"},
		Pipeline:      []string{"agent-a"},
		MaxIterations: 3,
		Status:        core.LoopRunning,
		StartedAt:     startedAt,
	}
}

// taskRun builds a running task run.
func taskRun(id, taskID string, createdAt int64) core.TaskRunRecord {
	return core.TaskRunRecord{
		ID:        id,
		TaskID:    taskID,
		AgentID:   "agent-a",
		SessionID: "s",
		RunID:     "run-1",
		Model:     core.TaskModelInfo{Provider: "mock", Model: "m-1"},
		Input:     json.RawMessage(`{"content":"hi","n":12345678901234567890}`),
		Status:    core.TaskRunning,
		CreatedAt: createdAt,
	}
}

// textEntry builds a crumb-log entry holding an aggregated text delta.
func textEntry(runID string, seq int64, sessionID string) core.CrumbLogEntry {
	return core.CrumbLogEntry{
		RunID:     runID,
		Seq:       seq,
		SessionID: sessionID,
		AgentID:   "agent-a",
		Type:      core.TypeTextDelta,
		Crumb: &core.TextDelta{
			CrumbBase: core.CrumbBase{AgentID: "agent-a", RunID: runID, SessionID: sessionID, Timestamp: baseTime + seq, Seq: seq},
			Delta:     "d" + strconv.FormatInt(seq, 10),
		},
		CreatedAt: baseTime + seq,
	}
}

// textEntries builds entries first..last of a run.
func textEntries(runID, sessionID string, first, last int64) []core.CrumbLogEntry {
	out := make([]core.CrumbLogEntry, 0, last-first+1)
	for seq := first; seq <= last; seq++ {
		out = append(out, textEntry(runID, seq, sessionID))
	}
	return out
}

// seqs lists the entries' seqs.
func seqs(entries []core.CrumbLogEntry) []int64 {
	out := make([]int64, len(entries))
	for i, e := range entries {
		out[i] = e.Seq
	}
	return out
}
