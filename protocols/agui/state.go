package agui

import (
	"bytes"
	"encoding/json"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
)

// StateToolName is the engine's built-in tool that changes the session's
// state with a JSON Patch (engine.StateToolName): each patch it applies
// reaches the stream as a tool:result:partial {"delta": [...]}, which the
// Mapper sends as STATE_DELTA.
const StateToolName = "core_state_update"

// stateDeltaEvent is STATE_DELTA with the patch as it was applied, byte
// for byte: the SDK's operation type drops a null value, which an add or
// replace of null needs.
type stateDeltaEvent struct {
	*events.BaseEvent
	Delta json.RawMessage `json:"delta"`
}

// ToJSON implements events.Event.
func (e *stateDeltaEvent) ToJSON() ([]byte, error) { return json.Marshal(e) }

// Validate implements events.Event.
func (e *stateDeltaEvent) Validate() error { return e.BaseEvent.Validate() }

// stateDelta is the patch of a core_state_update partial result
// ({"delta": [...]}, live or read back from a crumb log as raw JSON), or
// nil for anything else.
func stateDelta(result any) json.RawMessage {
	raw, err := json.Marshal(result)
	if err != nil {
		return nil
	}
	var v struct {
		Delta json.RawMessage `json:"delta"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	d := bytes.TrimSpace(v.Delta)
	if len(d) == 0 || d[0] != '[' {
		return nil
	}
	return d
}
