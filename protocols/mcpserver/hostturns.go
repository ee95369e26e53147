//lint:file-ignore SA1019 sampling is deprecated from MCP 2026-07-28 on (SEP-2577), and still part of it during the deprecation window

package mcpserver

import (
	"context"
	"crypto/rand"
	"iter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/breadai/bread/core"
)

// HostTurnTimeout is how long a run parked on a host turn (sampling over a
// 2026-07-28 multi-round-trip) waits for the client's retry before it is
// cancelled.
const HostTurnTimeout = 10 * time.Minute

// samplingKey names the sampling request in an input_required result.
const samplingKey = "sampling"

// hostTurns carries a 2026-07-28 call's sampling requests from its run's
// mcp-sampling model to the call's handler, which answers input_required:
// a sessionless request cannot send the client a request, so the host's
// message comes back with the client's retry of the call, and the model
// waits for it meanwhile.
type hostTurns struct{ asks chan *hostTurn }

// hostTurn is one model turn waiting for the host's message.
type hostTurn struct {
	params *mcp.CreateMessageWithToolsParams
	reply  chan *mcp.CreateMessageWithToolsResult // buffered: the handler never waits
}

type hostTurnsKey struct{}

func hostTurnsFrom(ctx context.Context) *hostTurns {
	h, _ := ctx.Value(hostTurnsKey{}).(*hostTurns)
	return h
}

// ask hands the turn to the call's handler and waits for the host's
// message (or the run's end).
func (h *hostTurns) ask(ctx context.Context, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	t := &hostTurn{params: params, reply: make(chan *mcp.CreateMessageWithToolsResult, 1)}
	select {
	case h.asks <- t:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-t.reply:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// course is a call's run as its handler reads it: a crumb sequence read in
// place, or, when the run's model may ask the host between requests
// (hostTurns), crumbs pumped from a run that outlives the request, on a
// context of its own.
type course struct {
	ctx    context.Context // the run's
	cancel context.CancelFunc
	seq    iter.Seq2[core.Crumb, error]
	host   *hostTurns
	crumbs <-chan pumped
}

type pumped struct {
	c   core.Crumb
	err error
}

// hostTurnsApply reports whether a call's runs may ask its client for
// sampling through input_required: a 2026-07-28 client that declared
// sampling.
func hostTurnsApply(req *mcp.CallToolRequest) bool {
	if req == nil || req.Session == nil {
		return false
	}
	ip := req.Session.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= roundTripVersion && ip.Capabilities != nil && ip.Capabilities.Sampling != nil
}

// newCourse prepares the context a call's runs run on.
func newCourse(ctx context.Context, req *mcp.CallToolRequest) *course {
	if !hostTurnsApply(req) {
		return &course{ctx: ctx, cancel: func() {}}
	}
	h := &hostTurns{asks: make(chan *hostTurn)}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &course{ctx: context.WithValue(rctx, hostTurnsKey{}, h), cancel: cancel, host: h}
}

// follow reads seq next. With host turns, a goroutine owned by the course
// pumps it; it ends with the run (cancel ends the run).
func (c *course) follow(seq iter.Seq2[core.Crumb, error]) {
	if c.host == nil {
		c.seq = seq
		return
	}
	ch := make(chan pumped)
	c.crumbs = ch
	go func() {
		defer close(ch)
		for cr, err := range seq {
			select {
			case ch <- pumped{cr, err}:
			case <-c.ctx.Done(): // nobody reads any more: let the run end
			}
		}
	}()
}

// drain reads the run to its end (see drain), or to a host turn, which
// the caller answers with input_required. ctx is the request's: when it
// ends first, the run is cancelled.
func (c *course) drain(ctx context.Context, top *string, notify func(core.Crumb)) (outcome, *hostTurn) {
	if c.host == nil {
		return drain(c.seq, top, notify), nil
	}
	var o outcome
	for {
		select {
		case pc, ok := <-c.crumbs:
			if !ok {
				return o, nil
			}
			o.add(pc.c, pc.err, top, notify)
		case t := <-c.host.asks:
			return o, t
		case <-ctx.Done():
			c.cancel()
			o.failure = core.Errorf(core.CodeRunCancelled, "the MCP client went away: %v", ctx.Err())
			return o, nil
		}
	}
}

// parked is a call whose run waits for the host's message: between the
// input_required result and the client's retry. It lives in this process,
// so the retry must reach it (see the README's Replicas).
type parked struct {
	course *course
	turn   *hostTurn
	owner  string
	tool   string
	top    string
	timer  *time.Timer
}

// park keeps the call's run waiting for the client's retry and answers
// input_required carrying the sampling request.
func (p *Plugin) park(ctx context.Context, req *mcp.CallToolRequest, c *course, t *hostTurn, top string) *mcp.CallToolResult {
	id := rand.Text()
	pk := &parked{course: c, turn: t, owner: ownerOf(ctx), tool: req.Params.Name, top: top}
	pk.timer = time.AfterFunc(HostTurnTimeout, func() {
		if p.ep.parked.CompareAndDelete(id, pk) {
			c.cancel()
		}
	})
	p.ep.parked.Store(id, pk)
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{samplingKey: t.params},
		RequestState:  roundState{V: 1, Parked: id, Run: top, Tool: req.Params.Name}.encode(),
	}
}

// unpark answers a parked run's host turn with the retry's message and
// hands its course to the retry; a state naming no parked call of the
// caller's (another identity's, a lapsed or an answered one) is refused.
func (p *Plugin) unpark(ctx context.Context, req *mcp.CallToolRequest, st roundState) (*course, string, *mcp.CallToolResult) {
	v, ok := p.ep.parked.Load(st.Parked)
	pk, _ := v.(*parked)
	if !ok || pk.owner != ownerOf(ctx) || pk.tool != req.Params.Name {
		return nil, "", errorResult(core.Errorf(core.CodeNotFound, "no run of %s waits for this retry (it was answered, it lapsed after %s, or it waits on another replica)", req.Params.Name, HostTurnTimeout))
	}
	msg, ok := req.Params.InputResponses[samplingKey].(*mcp.CreateMessageWithToolsResult)
	if !ok {
		return nil, "", errorResult(core.Errorf(core.CodeValidationError, "the retry carries no sampling result (%q) for the run it names", samplingKey))
	}
	if !p.ep.parked.CompareAndDelete(st.Parked, pk) {
		return nil, "", errorResult(core.Errorf(core.CodeNotFound, "the run this retry names was answered already"))
	}
	pk.timer.Stop()
	pk.turn.reply <- msg
	return pk.course, pk.top, nil
}

// ownerOf is the owner key of the request's identity ("" without auth).
func ownerOf(ctx context.Context) string {
	if id := core.IdentityFrom(ctx); id != nil {
		return core.OwnerKey(id)
	}
	return ""
}
