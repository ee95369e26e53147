package nats

import (
	"strconv"
	"strings"

	"github.com/breadai/bread/core"
)

// posHeader links each message to the one before it on its run's subject,
// so a subscription sees a frame the stream discarded (MaxBytes, MaxAge)
// instead of skipping it silently. Its value is "<epoch>.<i>.<prevSeq>":
// epoch names one transport's stretch of a run (from its first frame to
// the one ending the call: a run resumed later, here or on another replica,
// is a new epoch), i numbers the epoch's frames from 1, and prevSeq is the
// Seq of frame i-1 (0 when i is 1). Seqs alone cannot show a gap: deltas
// repeat their watermark, and aggregated log entries take seqs no frame
// carries.
const posHeader = "Bread-Pos"

// runPos is the numbering of one run's current epoch.
type runPos struct {
	epoch   string
	i       uint64
	prevSeq int64
}

// position returns the posHeader value of f, the next frame of its run,
// and forgets the run after the frame that ends the call. Publish is called
// in order per run, which is what makes the numbering the publish order.
func (t *Transport) position(f core.Frame) string {
	t.posMu.Lock()
	defer t.posMu.Unlock()
	p := t.positions[f.RunID]
	if p == nil {
		t.epochs++
		p = &runPos{epoch: t.idPrefix + strconv.FormatUint(t.epochs, 36)}
		t.positions[f.RunID] = p
	}
	p.i++
	v := p.epoch + "." + strconv.FormatUint(p.i, 10) + "." + strconv.FormatInt(p.prevSeq, 10)
	p.prevSeq = f.Seq
	if f.Crumb != nil && core.EndsCall(f.Crumb) {
		delete(t.positions, f.RunID)
	}
	return v
}

// parsePos reads a posHeader value; ok is false for a message without one
// (written by something else) or a malformed one.
func parsePos(v string) (epoch string, i uint64, prevSeq int64, ok bool) {
	rest, ps, found := cutLast(v)
	if !found {
		return "", 0, 0, false
	}
	epoch, is, found := cutLast(rest)
	if !found || epoch == "" {
		return "", 0, 0, false
	}
	i, err1 := strconv.ParseUint(is, 10, 64)
	prevSeq, err2 := strconv.ParseInt(ps, 10, 64)
	if err1 != nil || err2 != nil || i == 0 {
		return "", 0, 0, false
	}
	return epoch, i, prevSeq, true
}

func cutLast(s string) (string, string, bool) {
	k := strings.LastIndexByte(s, '.')
	if k < 0 {
		return "", "", false
	}
	return s[:k], s[k+1:], true
}
