package mcpclient

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// flight is one tools/call in progress on a server. Its request lives on
// the plugin's context, not the run's: when the server asks the human a
// question (elicitation), the run suspends and its context ends, while the
// server's request stays open, parked, until the human answers through
// bread's resume (which executes the tool again with the answer) or the
// wait times out.
type flight struct {
	key     string // run id and tool call id: the same on the resumed execution
	runID   string
	agentID string
	sess    *mcp.ClientSession
	ctx     context.Context
	cancel  context.CancelFunc
	// events carries the server's questions and, last, the call's result.
	events chan flightEvent
}

type flightEvent struct {
	res *mcp.CallToolResult
	err error
	ask *ask // a question instead of the result
}

// ask is one elicitation/create waiting for the human.
type ask struct {
	params *mcp.ElicitParams
	reply  chan *mcp.ElicitResult // buffered: an answer never blocks
}

type flightKeyType struct{}

// flights tracks the calls in progress and those parked on a human.
type flights struct {
	mu       sync.Mutex
	inflight map[*mcp.ClientSession]map[*flight]struct{}
	parked   map[string]*parkedAsk
}

type parkedAsk struct {
	f     *flight
	a     *ask
	timer *time.Timer
	// ctx ends when the question leaves the park (answered, timed out,
	// cancelled): the watch on its run stops with it.
	ctx  context.Context
	stop context.CancelFunc
}

func flightKey(tc core.ToolContext) string { return tc.RunID + "\x00" + tc.ToolCallID }

// start sends tools/call on sess under a context of the plugin's, carrying
// the flight so the SDK's multi-round-trip path (2026-07-28 servers) hands
// the server's questions to this call.
func (fs *flights) start(parent context.Context, sess *mcp.ClientSession, tc core.ToolContext, params *mcp.CallToolParams) *flight {
	f := &flight{key: flightKey(tc), runID: tc.RunID, agentID: tc.AgentID, sess: sess, events: make(chan flightEvent)}
	f.ctx, f.cancel = context.WithCancel(parent)
	f.ctx = context.WithValue(f.ctx, flightKeyType{}, f)
	fs.mu.Lock()
	if fs.inflight == nil {
		fs.inflight = map[*mcp.ClientSession]map[*flight]struct{}{}
	}
	if fs.inflight[sess] == nil {
		fs.inflight[sess] = map[*flight]struct{}{}
	}
	fs.inflight[sess][f] = struct{}{}
	fs.mu.Unlock()
	go func() {
		res, err := sess.CallTool(f.ctx, params)
		select {
		case f.events <- flightEvent{res: res, err: err}:
		case <-f.ctx.Done():
		}
	}()
	return f
}

// done forgets a flight and ends its request.
func (fs *flights) done(f *flight) {
	f.cancel()
	fs.mu.Lock()
	if m := fs.inflight[f.sess]; m != nil {
		delete(m, f)
		if len(m) == 0 {
			delete(fs.inflight, f.sess)
		}
	}
	fs.mu.Unlock()
}

// of finds the call a server's request belongs to: the one whose context
// it carries (2026-07-28, where a question is part of the call's own
// round trips), else the only call in progress on the session (the older
// revisions send a question as a request of its own, which names no call).
// Nil when it cannot tell.
func (fs *flights) of(ctx context.Context, sess *mcp.ClientSession) *flight {
	if f, ok := ctx.Value(flightKeyType{}).(*flight); ok {
		return f
	}
	if ir := sess.InitializeResult(); ir != nil && ir.ProtocolVersion >= "2026-07-28" {
		// Every question of this revision comes with its call's context:
		// one without is not a tool call's (a resource read's, say).
		return nil
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if m := fs.inflight[sess]; len(m) == 1 {
		for f := range m {
			return f
		}
	}
	return nil
}

// park keeps a flight's question until the human answers or timeout
// passes; then the question is cancelled at the server (whose tool
// finishes as it does on a cancel, within grace), and a later answer finds
// nothing parked (the tool is called again).
func (fs *flights) park(f *flight, a *ask, timeout, grace time.Duration, onTimeout func()) *parkedAsk {
	p := &parkedAsk{f: f, a: a}
	p.ctx, p.stop = context.WithCancel(f.ctx)
	fs.mu.Lock()
	if fs.parked == nil {
		fs.parked = map[string]*parkedAsk{}
	}
	if old := fs.parked[f.key]; old != nil && old != p {
		old.timer.Stop()
		old.stop()
	}
	fs.parked[f.key] = p
	p.timer = time.AfterFunc(timeout, func() {
		if fs.unpark(f.key, p) {
			fs.cancelParked(p, grace)
			onTimeout()
		}
	})
	fs.mu.Unlock()
	return p
}

// cancelParked cancels an unparked question at its server and lets the
// request finish within grace.
func (fs *flights) cancelParked(p *parkedAsk, grace time.Duration) {
	p.stop()
	p.a.reply <- &mcp.ElicitResult{Action: "cancel"}
	fs.abandon(p.f, grace)
}

// abandon lets a flight nobody waits for any more finish at the server:
// every further question is cancelled, the result dropped, and the request
// ended after grace at the latest.
func (fs *flights) abandon(f *flight, grace time.Duration) {
	defer fs.done(f)
	t := time.NewTimer(grace)
	defer t.Stop()
	for {
		select {
		case ev := <-f.events:
			if ev.ask == nil {
				return
			}
			ev.ask.reply <- &mcp.ElicitResult{Action: "cancel"}
		case <-t.C:
			return
		case <-f.ctx.Done():
			return
		}
	}
}

// unpark removes the parked question of key when it is p (any when p is
// nil); it reports whether it did.
func (fs *flights) unpark(key string, p *parkedAsk) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	cur, ok := fs.parked[key]
	if !ok || (p != nil && cur != p) {
		return false
	}
	delete(fs.parked, key)
	cur.timer.Stop()
	return true
}

// take removes and returns the parked question of key, or nil.
func (fs *flights) take(key string) *parkedAsk {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	p := fs.parked[key]
	if p != nil {
		delete(fs.parked, key)
		p.timer.Stop()
		p.stop()
	}
	return p
}

// closeAll ends every parked question (the plugin closes).
func (fs *flights) closeAll() {
	fs.mu.Lock()
	all := fs.parked
	fs.parked = nil
	fs.mu.Unlock()
	for _, p := range all {
		p.timer.Stop()
		p.stop()
		p.a.reply <- &mcp.ElicitResult{Action: "cancel"}
		fs.done(p.f)
	}
}
