// Package modeltest provides a scripted core.LanguageModel for deterministic
// tests of anything that drives a model: the runner, tasks, deciders.
//
// A Model replays one Turn per call to Stream, in order; the last turn
// repeats once the script is exhausted. A turn is a list of events, plus an
// optional error at the end, a delay between events, or a block that lasts
// until the call's context is cancelled. Every request is recorded so tests
// can assert what the model was asked.
//
//	m := modeltest.New(
//		modeltest.ToolCall("get_weather", map[string]any{"city": "Rome"}),
//		modeltest.Text("It is sunny in ", "Rome."),
//	)
package modeltest
