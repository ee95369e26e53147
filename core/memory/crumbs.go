package memory

import (
	"cmp"
	"context"
	"slices"
	"sort"

	"github.com/breadai/bread/core"
)

// crumbRun is one run's crumb log, sorted by Seq, kept in chunks that are
// filled in place and never reallocated: an append never copies earlier
// entries, and a reader may copy the entries it saw after releasing the
// lock, since writers only ever write past them. Any other change (an
// out-of-order seq, a cascade) builds new chunks.
type crumbRun struct {
	// chunks are non-empty, every one full but the last; sizes double from
	// firstChunk to maxChunk, so short runs stay small.
	chunks [][]core.CrumbLogEntry
	// indexed is the last session anchor recorded in Store.sessionRuns for
	// this run, so appends touch the index only when the anchor changes.
	indexed string
	// first and heads back the run's first chunk and the chunks' first
	// array, so a short run's log is one object (a store keeps ten
	// thousand of them, which the collector marks on every cycle) and one
	// allocation instead of three. They serve the first push only: a
	// rebuild makes new chunks, since a reader may still be copying
	// entries of the old ones.
	first [firstChunk]core.CrumbLogEntry
	heads [1][]core.CrumbLogEntry
	used  bool // first and heads have been handed out
}

const (
	firstChunk = 4
	maxChunk   = 1024
)

// AppendsInline reports true: the log's writes never wait on I/O, so the
// engine appends to it on a stream's goroutine (core.InlineCrumbLog).
func (s *Store) AppendsInline() bool { return true }

// AppendCrumbs implements core.CrumbLog. A batch is written whole or not at
// all: an entry without a run id or crumb, or a seq its run already holds,
// fails the batch with a VALIDATION_ERROR.
func (s *Store) AppendCrumbs(ctx context.Context, entries []core.CrumbLogEntry) error {
	if err := checkEntries(entries); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if err := s.checkFence(ctx); err != nil {
		return err
	}
	if err := s.checkSeqs(entries); err != nil {
		return err
	}
	s.appendCrumbs(entries)
	return nil
}

// checkEntries fails when an entry has no run id or no crumb.
func checkEntries(entries []core.CrumbLogEntry) error {
	for i := range entries {
		if entries[i].RunID == "" {
			return invalid("crumb-log entry %d has no run id", i)
		}
		if entries[i].Crumb == nil {
			return invalid("crumb-log entry %d (%s/%d) has no crumb", i, entries[i].RunID, entries[i].Seq)
		}
	}
	return nil
}

// appendCrumbs adds entries checked by checkEntries and checkSeqs. The
// write lock must be held.
func (s *Store) appendCrumbs(entries []core.CrumbLogEntry) {
	// Entries below their run's last seq are merged once per run at the end,
	// so a disordered batch rebuilds a run once, not once per entry.
	var late map[*crumbRun][]core.CrumbLogEntry
	for i := range entries {
		e := &entries[i]
		r := s.run(e)
		if last, ok := r.last(); !ok || last < e.Seq {
			r.push(e)
			continue
		}
		if late == nil {
			late = make(map[*crumbRun][]core.CrumbLogEntry)
		}
		late[r] = append(late[r], *e)
	}
	for r, es := range late {
		r.merge(es)
	}
}

// checkSeqs fails when an entry's (run, seq) is already logged or repeats
// within the batch. The write lock must be held.
func (s *Store) checkSeqs(entries []core.CrumbLogEntry) error {
	increasing := true // within the batch, per run, as the choke point sends them
	for i := range entries {
		e := &entries[i]
		if r := s.runs[e.RunID]; r != nil && r.holds(e.Seq) {
			return invalid("the crumb log already holds seq %d of run %q", e.Seq, e.RunID)
		}
		if i > 0 && (e.RunID != entries[i-1].RunID || e.Seq <= entries[i-1].Seq) {
			increasing = false
		}
	}
	if increasing {
		return nil
	}
	type key struct {
		run string
		seq int64
	}
	seen := make(map[key]struct{}, len(entries))
	for i := range entries {
		k := key{entries[i].RunID, entries[i].Seq}
		if _, dup := seen[k]; dup {
			return invalid("the batch holds seq %d of run %q twice", k.seq, k.run)
		}
		seen[k] = struct{}{}
	}
	return nil
}

// run returns the run e belongs to, created if need be, and indexes e's
// session anchor. The write lock must be held.
func (s *Store) run(e *core.CrumbLogEntry) *crumbRun {
	r := s.runs[e.RunID]
	if r == nil {
		r = &crumbRun{}
		s.runs[e.RunID] = r
	}
	if e.SessionID != "" && e.SessionID != r.indexed {
		runs := s.sessionRuns[e.SessionID]
		runs.put(e.RunID, struct{}{})
		s.sessionRuns[e.SessionID] = runs
		r.indexed = e.SessionID
	}
	return r
}

// push appends an entry whose seq is above every logged one.
func (r *crumbRun) push(e *core.CrumbLogEntry) {
	k := len(r.chunks)
	if k == 0 && !r.used {
		r.used = true
		r.heads[0] = r.first[:0]
		r.chunks = r.heads[:]
		k = 1
	}
	if k == 0 || len(r.chunks[k-1]) == cap(r.chunks[k-1]) {
		size := firstChunk
		if k > 0 {
			size = min(2*cap(r.chunks[k-1]), maxChunk)
		}
		r.chunks = append(r.chunks, make([]core.CrumbLogEntry, 0, size))
		k++
	}
	r.chunks[k-1] = append(r.chunks[k-1], *e)
}

// merge adds entries whose seqs are not above the last logged one,
// rebuilding the chunks.
func (r *crumbRun) merge(entries []core.CrumbLogEntry) {
	all := append(r.all(), entries...)
	slices.SortStableFunc(all, func(a, b core.CrumbLogEntry) int { return cmp.Compare(a.Seq, b.Seq) })
	r.rebuild(all)
}

// all returns every entry in a new slice.
func (r *crumbRun) all() []core.CrumbLogEntry {
	n := 0
	for _, c := range r.chunks {
		n += len(c)
	}
	out := make([]core.CrumbLogEntry, 0, n)
	for _, c := range r.chunks {
		out = append(out, c...)
	}
	return out
}

// rebuild replaces the chunks with new ones holding entries, sorted.
func (r *crumbRun) rebuild(entries []core.CrumbLogEntry) {
	r.chunks = nil
	for i := range entries {
		r.push(&entries[i])
	}
}

// last returns the highest logged seq.
func (r *crumbRun) last() (int64, bool) {
	if len(r.chunks) == 0 {
		return 0, false
	}
	c := r.chunks[len(r.chunks)-1]
	return c[len(c)-1].Seq, true
}

// after locates the first entry with Seq > seq: chunk ci at offset off, ci
// == len(r.chunks) when there is none.
func (r *crumbRun) after(seq int64) (ci, off int) {
	ci = sort.Search(len(r.chunks), func(i int) bool {
		c := r.chunks[i]
		return c[len(c)-1].Seq > seq
	})
	if ci < len(r.chunks) {
		c := r.chunks[ci]
		off = sort.Search(len(c), func(j int) bool { return c[j].Seq > seq })
	}
	return ci, off
}

// holds reports whether seq is logged.
func (r *crumbRun) holds(seq int64) bool {
	if last, ok := r.last(); !ok || last < seq {
		return false
	}
	ci, off := r.after(seq - 1)
	return ci < len(r.chunks) && r.chunks[ci][off].Seq == seq
}

// GetCrumbs implements core.CrumbLog.
func (s *Store) GetCrumbs(ctx context.Context, runID string, afterSeq int64, limit int) ([]core.CrumbLogEntry, error) {
	// The chunk headers of the window are copied under the lock (a writer
	// may lengthen the last one); their entries are copied after it.
	var (
		stack  [32][]core.CrumbLogEntry
		window [][]core.CrumbLogEntry
	)
	if err := s.rlock(ctx); err != nil {
		return nil, err
	}
	if r := s.runs[runID]; r != nil {
		if ci, off := r.after(afterSeq); ci < len(r.chunks) {
			window = append(stack[:0], r.chunks[ci:]...)
			window[0] = window[0][off:]
		}
	}
	s.mu.RUnlock()

	total := 0
	for i, c := range window {
		if limit > 0 && total+len(c) >= limit {
			window[i] = c[:limit-total]
			window = window[:i+1]
			total = limit
			break
		}
		total += len(c)
	}
	out := make([]core.CrumbLogEntry, 0, total)
	for _, c := range window {
		out = append(out, c...)
	}
	return out, nil
}

// MaxCrumbSeq implements core.CrumbLog.
func (s *Store) MaxCrumbSeq(ctx context.Context, runID string) (int64, error) {
	if err := s.rlock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.RUnlock()
	if r := s.runs[runID]; r != nil {
		last, _ := r.last()
		return last, nil
	}
	return 0, nil
}

// dropSessionCrumbs deletes the entries anchored to a session, keeping the
// rest of their runs. The write lock must be held.
func (s *Store) dropSessionCrumbs(sessionID string) {
	for runID := range s.sessionRuns[sessionID].all {
		r := s.runs[runID]
		if r == nil {
			continue
		}
		var kept []core.CrumbLogEntry
		for _, c := range r.chunks {
			for _, e := range c {
				if e.SessionID != sessionID {
					kept = append(kept, e)
				}
			}
		}
		if len(kept) == 0 {
			delete(s.runs, runID)
			continue
		}
		r.rebuild(kept)
		r.indexed = ""
	}
	delete(s.sessionRuns, sessionID)
}
