// Package replay is a language-model provider that replays recorded model
// transcripts, for running agents offline and deterministically: examples,
// demos, CI, and reproducing a bug without a network or an API key.
//
// A transcript is JSON Lines, one model event per line, grouped by the model
// call they belong to:
//
//	{"call":0,"type":"tool-call","toolCallId":"c1","toolName":"tool_weather","input":{"city":"Rome"}}
//	{"call":0,"type":"finish","finishReason":"tool-calls"}
//	{"call":1,"type":"text-delta","delta":"Sunny in Rome."}
//	{"call":1,"type":"finish","finishReason":"stop","usage":{"inputTokens":12,"outputTokens":4}}
//
// The n-th call to Stream plays call n; after the last call the transcript
// starts over (unless Options.Once), so a server can answer any number of
// runs. A Recorder writes the same format from a real provider's calls.
package replay
