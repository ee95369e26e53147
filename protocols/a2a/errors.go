package a2a

import (
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
)

// invalidParams is -32602 with msg.
func invalidParams(msg string) error { return fmt.Errorf("%s: %w", msg, a2a.ErrInvalidParams) }

// rpcError turns a failure before a run started (or a store failure) into
// the JSON-RPC error a2a-go writes: a2a-go answers with the spec's code
// for the wrapped sentinel and puts this error's text, client-safe, in
// error.data.error. Bad input, and a contextId naming no session of the
// caller's (SESSION_NOT_FOUND), is -32602 (invalid params); a session that is
// busy (SESSION_BUSY), a checkpoint another request claimed, a full or
// stopping instance are -32000 (server error) with the bread code first in
// the text; anything else is -32603 (internal error) and only logged.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{a2a.ErrParseError, a2a.ErrInvalidRequest, a2a.ErrMethodNotFound, a2a.ErrInvalidParams,
		a2a.ErrServerError, a2a.ErrTaskNotFound, a2a.ErrTaskNotCancelable, a2a.ErrUnsupportedOperation, a2a.ErrInternalError} {
		if errors.Is(err, s) {
			return err
		}
	}
	ce := core.Sanitize(err)
	var sentinel error
	switch ce.Code {
	case core.CodeValidationError, core.CodeBadRequest, core.CodeBodyTooLarge, core.CodeSessionNotFound:
		// SESSION_NOT_FOUND: a contextId that names no session of the
		// caller's (another identity's, under the session ownership rule).
		sentinel = a2a.ErrInvalidParams
	case core.CodeSessionBusy, core.CodeCheckpointClaimed, core.CodeCheckpointNotFound, core.CodeConcurrencyLimit,
		core.CodeInstanceStopping, core.CodeNotStarted, core.CodeForbidden:
		sentinel = a2a.ErrServerError
	default:
		return a2a.ErrInternalError
	}
	return fmt.Errorf("%s: %s: %w", ce.Code, ce.Message, sentinel)
}
