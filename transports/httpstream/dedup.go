package httpstream

import "github.com/breadai/bread/core"

// Dedup applies bread's reconnect rule to a run's frames. A durable frame is
// new when its seq is above the last seen. A text or reasoning delta carries
// a watermark, the seq of the last durable crumb before it, and every delta
// of watermark w is, in order, part of the crumb log's entry w+1 (the
// engine's choke point closes the window at each watermark). So a reader
// that resumes after seq w gets the deltas of watermark w again from their
// first byte: from the log entry, which a passive stream relabels with w,
// or from the bus when the entry is not committed yet.
//
// Two rules follow. Accept is the coarse one any client can apply (durable
// frames with seq > Last, deltas with seq >= Last): it loses nothing and
// repeats at most the delta text of watermark Last that the reader already
// had. Frame is the exact one: it also counts the bytes of text and of
// reasoning it has accepted at watermark Last, and after Restart (a new
// connection) drops that many bytes of the deltas of watermark Last that
// arrive again, trimming a delta that repeats only in part. A relayed run's
// text is then exactly the run's. The exact rule needs a server that sends
// every delta under its watermark, replayed ones included: this package's
// passive stream does, and says so with the DeltaSeqHeader. From any other
// source (an older server, the original TypeScript bread, whose log
// replays carry their own seq) Restart(false) keeps Frame at the coarse
// rule for that connection: repeats, never a loss.
//
// The zero value starts before the first crumb; a reader resuming from a
// position sets Last. Use one of Accept and Frame per Dedup.
type Dedup struct {
	// Last is the highest seq accepted so far; send it as Last-Event-ID.
	Last    int64
	had     [2]int // bytes of text, reasoning accepted at watermark Last
	pos     [2]int // bytes of them at watermark Last seen since Restart
	inexact bool   // the source may label a replayed delta with another seq
}

// DeltaSeqHeader, with the value DeltaSeqWatermark, is sent by a passive
// stream whose every delta carries the watermark it was streamed under,
// log replays included: the promise Dedup's exact rule needs.
const (
	DeltaSeqHeader    = "Bread-Delta-Seq"
	DeltaSeqWatermark = "watermark"
)

// Accept reports whether a frame with seq and crumb type typ is new under
// the coarse rule, and records it.
func (d *Dedup) Accept(seq int64, typ string) bool {
	var ok bool
	if core.IsDelta(typ) {
		ok = seq >= d.Last
	} else {
		ok = seq > d.Last
	}
	if ok && seq > d.Last {
		d.advance(seq)
	}
	return ok
}

// Frame applies the exact rule to f and returns what of it is new: f itself,
// a copy of a delta trimmed to the text not had yet, or false for a repeat.
// A frame with seq 0 (a failure before a run existed) is always new.
func (d *Dedup) Frame(f core.Frame) (core.Frame, bool) {
	if f.Seq <= 0 || f.Crumb == nil {
		return f, true
	}
	slot, text, ok := deltaText(f.Crumb)
	if !ok {
		if f.Seq <= d.Last {
			return f, false
		}
		d.advance(f.Seq)
		return f, true
	}
	switch {
	case f.Seq < d.Last:
		return f, false
	case f.Seq > d.Last:
		d.advance(f.Seq)
	}
	if d.inexact {
		return f, true // counted from nothing: a later source repeats, never skips
	}
	start := d.pos[slot]
	d.pos[slot] += len(text)
	if d.pos[slot] <= d.had[slot] {
		return f, false
	}
	if skip := d.had[slot] - start; skip > 0 {
		f.Crumb = withDelta(f.Crumb, f.Seq, text[skip:])
	}
	d.had[slot] = d.pos[slot]
	return f, true
}

// Restart tells Frame that what follows comes from a new connection (or
// any source that replays watermark Last from its first byte): the deltas
// of watermark Last are counted from zero again. exact reports whether the
// source sends every delta under its watermark (the DeltaSeqHeader); when
// it does not, Frame applies the coarse rule until the next Restart.
func (d *Dedup) Restart(exact bool) {
	d.pos = [2]int{}
	if d.inexact = !exact; d.inexact {
		d.had = [2]int{}
	}
}

func (d *Dedup) advance(seq int64) {
	d.Last = seq
	d.had, d.pos = [2]int{}, [2]int{}
}

// deltaText returns a text or reasoning delta's slot and text.
func deltaText(c core.Crumb) (slot int, text string, ok bool) {
	switch v := c.(type) {
	case *core.TextDelta:
		return 0, v.Delta, true
	case *core.ReasoningDelta:
		return 1, v.Delta, true
	}
	return 0, "", false
}

// withDelta returns a copy of a text or reasoning delta with seq and text;
// crumbs are shared with the log and the listeners, so never changed.
func withDelta(c core.Crumb, seq int64, text string) core.Crumb {
	switch v := c.(type) {
	case *core.TextDelta:
		cp := *v
		cp.Seq, cp.Delta = seq, text
		return &cp
	case *core.ReasoningDelta:
		cp := *v
		cp.Seq, cp.Delta = seq, text
		return &cp
	}
	return c
}
