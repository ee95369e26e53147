// Package a2a exposes a bread agent as an A2A endpoint (https://a2a-protocol.org,
// spec v0.3): a plugin that serves the agent's Agent Card (GET at CardPath,
// action ActionCard) and the JSON-RPC methods message/send, message/stream,
// tasks/get, tasks/cancel and tasks/resubscribe (POST at the path of the
// configured URL, action ActionRPC).
//
// Options.SpecVersion "1.0" serves the spec v1.0 JSON-RPC binding instead
// (SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask,
// SubscribeToTask, the push config methods, GetExtendedAgentCard) and, under
// the same path, its HTTP+JSON binding, whose routes call the same
// operations.
// NewRemote is the client side: any A2A agent as a core.RemoteAgent.
//
// A task is a bread run and its context is the run's session; both are read
// back from the store's run records, so any replica sharing the store
// answers for any task. The wire types, the JSON-RPC and SSE plumbing are
// the a2a-go SDK's (github.com/a2aproject/a2a-go); this package implements
// its a2asrv.RequestHandler over a core.Runtime. To speak AG-UI to a UI
// instead, use protocols/agui.
package a2a
