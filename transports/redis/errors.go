package redis

import "github.com/breadai/bread/core"

// Codes of the errors this package returns, in the style of core's catalogue.
const (
	// CodeTransportClosed: Publish or Subscribe after Close, or a
	// subscription ended because the transport closed.
	CodeTransportClosed = "TRANSPORT_CLOSED"
	// CodeTransportUnavailable: Start could not reach Redis.
	CodeTransportUnavailable = "TRANSPORT_UNAVAILABLE"
	// CodeSubscriberLagged: the stream no longer holds a frame the
	// subscription has not yielded (a trim passed it, or frames were lost
	// in an outage); the client catches up from the store instead of
	// silently missing them.
	CodeSubscriberLagged = "SUBSCRIBER_LAGGED"
)

var (
	// ErrClosed is returned by Publish after Close and yielded by
	// subscriptions that Close ended. It wraps core.ErrBusClosed: a tail
	// that knows only core sees a bus that is closed for good (the server
	// stops), not one to subscribe to again.
	ErrClosed = &core.BreadError{Code: CodeTransportClosed, Message: "redis transport: closed", Cause: core.ErrBusClosed}
	// ErrSubscriberLagged ends a subscription whose unread frames were
	// trimmed from the stream.
	ErrSubscriberLagged = &core.BreadError{Code: CodeSubscriberLagged, Message: "redis transport: the subscriber fell behind the stream's retention; catch up from the store"}
)

func invalidConfig(msg string) *core.BreadError {
	return &core.BreadError{Code: core.CodeInvalidConfig, Message: "redis transport: " + msg}
}
