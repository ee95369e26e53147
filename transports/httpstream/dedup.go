package httpstream

import "github.com/breadai/bread/core"

// Dedup applies bread's reconnect rule to a run's frames: a durable frame is
// new when its seq is above the last seen, a text or reasoning delta when its
// seq (a watermark) is at least the last seen. Deltas are aggregated in the
// crumb log under a seq of their own, so a reader that switches from the log
// to live frames, or reconnects, sees at most one delta window twice and
// never misses one. The zero value starts before the first crumb.
type Dedup struct {
	// Last is the highest seq accepted so far; send it as Last-Event-ID.
	Last int64
}

// Accept reports whether a frame with seq and crumb type typ is new, and
// records it.
func (d *Dedup) Accept(seq int64, typ string) bool {
	var ok bool
	if core.IsDelta(typ) {
		ok = seq >= d.Last
	} else {
		ok = seq > d.Last
	}
	if ok && seq > d.Last {
		d.Last = seq
	}
	return ok
}
