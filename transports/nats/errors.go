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
)

// ErrClosed is returned by Publish after Close and yielded by
// subscriptions that Close ended.
var ErrClosed = &core.BreadError{Code: CodeTransportClosed, Message: "nats transport: closed"}

func invalidConfig(msg string) *core.BreadError {
	return &core.BreadError{Code: core.CodeInvalidConfig, Message: "nats transport: " + msg}
}
