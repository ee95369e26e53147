// Package agui speaks the AG-UI protocol (https://docs.ag-ui.com) for bread:
// a plugin whose route, POST /ag-ui/run by default (action ActionRun),
// accepts a RunAgentInput and streams the run as AG-UI events over
// server-sent events, a run that waits for a human finishing with an
// interrupt the client answers on its next RunAgentInput; and the Mapper
// behind it, which turns any crumb stream into AG-UI events.
//
// The events and RunAgentInput are the types of the AG-UI Go SDK
// (github.com/ag-ui-protocol/ag-ui/sdks/community/go). For a declarative UI
// spec per crumb instead of a protocol stream, use extensions/a2ui.
package agui
