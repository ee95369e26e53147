// Package agui speaks the AG-UI protocol (https://docs.ag-ui.com) for bread:
// a Mapper that turns one crumb stream into AG-UI events, with the text,
// tool, step and state framing the spec asks for, and a run that waits for
// a human finishing with an interrupt outcome.
//
// The events are the types of the AG-UI Go SDK
// (github.com/ag-ui-protocol/ag-ui/sdks/community/go). For a declarative UI
// spec per crumb instead of a protocol stream, use extensions/a2ui.
package agui
