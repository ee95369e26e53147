// Package stdout prints crumbs in a terminal: streamed text as it arrives,
// tool calls with their results, human requests, and errors. A Printer is a
// listener (core.Listener through its Listen method), registered with the
// engine's On; it is not a bus and never replaces the HTTP streams. The
// bread CLI uses it for chat, invoke --trace, and a server's
// `listeners: [stdout]`.
//
// Colours and symbols are used only when the writer is a terminal (or
// Options.Color says so); piped output is plain text, one block per line.
package stdout
