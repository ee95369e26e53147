// Package stdout is a sink transport that renders crumbs in a terminal:
// streamed text as it arrives, tool calls with their results, human
// requests, and errors. It is what the bread CLI uses for chat and invoke.
//
// Colours and symbols are used only when the writer is a terminal (or
// Options.Color says so); piped output is plain text, one block per line.
package stdout
