package engine

import (
	"context"
	"encoding/json"

	"github.com/breadai/bread/core"
)

// ChokePointForTest exposes one stream's choke point to the external tests
// (benchmarks drive it directly, with the memory store).
type ChokePointForTest struct{ cp *chokePoint }

func (in *Instance) NewChokePointForTest(ctx context.Context) ChokePointForTest {
	return ChokePointForTest{cp: in.newChokePoint(ctx)}
}

func (c ChokePointForTest) Process(ctx context.Context, cr core.Crumb) { c.cp.process(ctx, cr) }
func (c ChokePointForTest) Finish()                                    { c.cp.finish() }

// StartTickForTest starts a schedule tick's run under runID, as the
// timetable does.
func (in *Instance) StartTickForTest(ctx context.Context, runID, agentID string, input any) (core.Detached, error) {
	return tickStarter{in}.StartBackground(ctx, runID, agentID, input, core.RunOptions{}, core.BackgroundOptions{})
}

// WorkJobForTest hands a job to the Instance's job worker, as a queue would.
func (in *Instance) WorkJobForTest(ctx context.Context, j core.Job) error {
	return in.newWorker().WorkJob(ctx, j)
}

// RunJobForTest is the job enqueueRun would queue for a run.
func RunJobForTest(runID, agentID string, input any, sessionID, webhook string) core.Job {
	raw, _ := json.Marshal(input)
	payload, _ := json.Marshal(runJob{RunID: runID, AgentID: agentID, Input: raw, Options: core.RunOptions{Session: core.SessionOptions{ID: sessionID}}, Webhook: webhook})
	return core.Job{Kind: core.JobKindRun, Key: runID, Payload: payload, Attempt: 2}
}

// PipelineJobForTest is the job RunPipelineBackground would queue.
func PipelineJobForTest(runID, pipelineID string, input any) core.Job {
	raw, _ := json.Marshal(input)
	payload, _ := json.Marshal(runJob{RunID: runID, PipelineID: pipelineID, Input: raw})
	return core.Job{Kind: core.JobKindRun, Key: runID, Payload: payload, Attempt: 2}
}

// ToolEmitDecisionsForTest is the table that decides which crumb types a
// tool may emit, keyed by type.
func ToolEmitDecisionsForTest() map[string]bool {
	out := make(map[string]bool, len(toolEmits))
	for typ, e := range toolEmits {
		out[typ] = e.admit
	}
	return out
}
