// Package a2ui maps bread's crumbs to A2UI declarative UI specs
// (v1.0-candidate): progress, streamed text, tool cards, forms for a human,
// errors and files, so a client can render any run without knowing crumb
// shapes. Map works on any crumb stream; Plugin hands every crumb of an
// engine to a callback. For the AG-UI protocol stream, use protocols/agui.
package a2ui
