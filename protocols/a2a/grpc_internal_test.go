package a2a

import (
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/breadai/bread/core"
)

// TestGRPCStatus: the handler's errors reach a gRPC client with the code
// the v1.0 bindings give them, the JSON-RPC detail as message, an
// internal error undescribed.
func TestGRPCStatus(t *testing.T) {
	for _, c := range []struct {
		err  error
		code codes.Code
		msg  string
	}{
		{rpcError(core.Errorf(core.CodeValidationError, "bad input")), codes.InvalidArgument, "VALIDATION_ERROR: bad input"},
		{rpcError(core.Errorf(core.CodeSessionBusy, "busy")), codes.Aborted, "SESSION_BUSY: busy"},
		{rpcError(core.Errorf(core.CodeConcurrencyLimit, "full")), codes.ResourceExhausted, "CONCURRENCY_LIMIT: full"},
		{rpcError(core.Errorf(core.CodeInstanceStopping, "stopping")), codes.Unavailable, "INSTANCE_STOPPING: stopping"},
		{rpcError(errors.New("the database is down")), codes.Internal, "Internal error"},
		{a2a.ErrTaskNotFound, codes.NotFound, "Task not found"},
		{a2a.ErrTaskNotCancelable, codes.FailedPrecondition, "Task cannot be canceled"},
		{a2a.ErrUnsupportedOperation, codes.Unimplemented, "This operation is not supported"},
		{a2a.ErrPushNotificationNotSupported, codes.Unimplemented, "Push notifications are not supported"},
		{errUnauthenticated, codes.Unauthenticated, "UNAUTHENTICATED: the extended agent card is for authenticated callers"},
		{status.Error(codes.Canceled, "gone"), codes.Canceled, "gone"},
	} {
		st := status.Convert(grpcStatus(c.err))
		if st.Code() != c.code || st.Message() != c.msg {
			t.Errorf("%v = %s %q, want %s %q", c.err, st.Code(), st.Message(), c.code, c.msg)
		}
	}
	if grpcStatus(nil) != nil {
		t.Error("nil is not nil")
	}
}
