package nats

import "github.com/breadai/bread/core"

// Codes of the errors this package returns, in the style of core's
// catalogue (the same codes as transports/redis).
const (
	// CodeTransportClosed: Publish or Subscribe after Close, or a
	// subscription ended because the transport closed.
	CodeTransportClosed = "TRANSPORT_CLOSED"
	// CodeTransportUnavailable: Start could not reach NATS or JetStream.
	CodeTransportUnavailable = "TRANSPORT_UNAVAILABLE"
	// CodeSubscriberLagged: the stream discarded (MaxBytes, MaxAge) a frame
	// the subscription wanted and had not read; the reader catches up from
	// the crumb log.
	CodeSubscriberLagged = "SUBSCRIBER_LAGGED"
)

// ErrClosed is returned by Publish after Close and yielded by
// subscriptions that Close ended.
var ErrClosed = &core.BreadError{Code: CodeTransportClosed, Message: "nats transport: closed"}

// ErrSubscriberLagged ends a subscription that would otherwise skip frames
// it wanted: the stream no longer holds them. They are in the crumb log.
var ErrSubscriberLagged = &core.BreadError{Code: CodeSubscriberLagged, Message: "nats transport: the stream discarded frames the subscriber had not read; catch up from the store"}

func invalidConfig(msg string) *core.BreadError {
	return &core.BreadError{Code: core.CodeInvalidConfig, Message: "nats transport: " + msg}
}
