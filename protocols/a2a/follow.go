package a2a

import (
	"context"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream"
)

// replayPage is how many log entries one GetCrumbs call reads.
const replayPage = 1000

// maxSubscriptionFailures ends a resubscription whose bus subscription
// keeps failing without delivering anything.
const maxSubscriptionFailures = 3

// liveItem is one frame, or the failure, of a bus subscription.
type liveItem struct {
	f   core.Frame
	err error
}

// follow re-attaches to a run the way bread's passive run stream does: it
// subscribes to the bus first (so nothing published meanwhile is lost),
// replays the crumb log from the start, then yields live frames under the
// reconnect rule (httpstream.Dedup), mapping each crumb through m, until a
// final status, the client going away, or (without a duplex bus) the end
// of the log. A failed subscription catches up from the log again. yield
// gets each event with the seq of the crumb it came from.
//
// Log entries below history are the past of a run known to have gone on
// (an answer resumed it): an input request among them is never the
// task's current state, even when the log, written behind the run, ends
// on it.
func (p *Plugin) follow(ctx context.Context, runID string, history int64, m *mapper, yield func(ev a2a.Event, seq int64) bool) {
	var clog *core.Storage // nil: the store keeps no crumb log
	if st := p.rt.Storage(); st.Has(core.StoreCrumbLog) {
		clog = st
	}
	var sub *core.Bus // nil: the bus cannot subscribe
	if bus := p.rt.Bus(); bus.Has(core.BusSubscribe) {
		sub = bus
	}
	filter := p.rt.CrumbFilter()
	var d httpstream.Dedup
	// emit maps one crumb; true ends the stream.
	emit := func(c core.Crumb, seq int64, waiting bool) bool {
		if filter != nil && !filter(c) {
			return false
		}
		evs, final := m.events(httpstream.ClientSafe(c), waiting)
		for _, ev := range evs {
			if !yield(ev, seq) {
				return true
			}
		}
		return final
	}
	for failures := 0; failures < maxSubscriptionFailures; {
		sctx, cancel := context.WithCancel(ctx)
		var live chan liveItem
		if sub != nil {
			live = make(chan liveItem, 256)
			go func(after int64) {
				defer close(live)
				for f, err := range sub.Subscribe(sctx, runID, after) {
					select {
					case live <- liveItem{f, err}:
					case <-sctx.Done():
						return
					}
					if err != nil {
						return
					}
				}
			}(max(d.Last-1, 0))
		}
		if clog != nil {
			for {
				entries, err := clog.GetCrumbs(ctx, runID, d.Last, replayPage)
				if err != nil {
					if ctx.Err() == nil {
						p.log.WarnContext(ctx, "a2a: a task's catch-up from the crumb log failed; following live frames only", "taskId", runID, "error", err)
					}
					break
				}
				for i, e := range entries {
					d.Last = max(d.Last, e.Seq)
					if e.Crumb == nil {
						continue
					}
					if emit(e.Crumb, e.Seq, i == len(entries)-1 && len(entries) < replayPage && e.Seq >= history) {
						cancel()
						return
					}
				}
				if len(entries) < replayPage {
					break
				}
			}
		}
		if live == nil {
			cancel()
			return
		}
		before := d.Last
	drain:
		for {
			select {
			case <-ctx.Done():
				cancel()
				return
			case it, ok := <-live:
				if !ok || it.err != nil {
					break drain
				}
				if it.f.Crumb == nil || !d.Accept(it.f.Seq, it.f.Crumb.CrumbType()) {
					continue
				}
				if emit(it.f.Crumb, it.f.Seq, true) {
					cancel()
					return
				}
			}
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		if d.Last != before {
			failures = 0
		} else {
			failures++
		}
		p.log.InfoContext(ctx, "a2a: a task's bus subscription ended; catching up from the crumb log", "taskId", runID)
	}
}
