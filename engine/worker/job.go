package worker

import (
	"encoding/json"

	"github.com/breadai/bread/core"
)

// RunJob is the payload of a core.JobKindRun job: everything a worker on
// any replica needs to start the run as its caller asked. Its JSON is what
// queues store, so it only grows by optional fields.
type RunJob struct {
	RunID   string `json:"runId"`
	AgentID string `json:"agentId,omitempty"`
	// PipelineID is set, instead of AgentID, for a background pipeline.
	PipelineID string             `json:"pipelineId,omitempty"`
	Input      json.RawMessage    `json:"input,omitempty"`
	Options    core.RunOptions    `json:"options,omitzero"`
	Webhook    string             `json:"webhook,omitempty"`
	Identity   *core.AuthIdentity `json:"identity,omitempty"`
	// Delegation is the chain of agents that delegated down to the caller
	// (core.DelegationChainFrom: a Bread-Delegation-Depth header's
	// "(remote)" levels, a delegating run's agent ids): the run starts that
	// deep, so queueing it does not restart the delegation limit. Empty at
	// top level, and in jobs queued before it existed.
	Delegation []string `json:"delegation,omitempty"`
	// QueuedAt is when the job was enqueued (Unix ms, the engine's clock).
	// The job is enqueued before its run's record is written, so a worker
	// that finds no record tells by it a record still to come (a young
	// job: snoozed) from one its enqueuer died before writing (the job
	// starts the run itself). Zero in jobs queued before it existed.
	QueuedAt int64 `json:"queuedAt,omitempty"`
}

// DecodeInput is the run's input, decoded from the payload (which holds
// valid JSON, so it decodes again); nil when there is none.
func (p RunJob) DecodeInput() any {
	var input any
	if len(p.Input) > 0 {
		_ = json.Unmarshal(p.Input, &input)
	}
	return input
}
