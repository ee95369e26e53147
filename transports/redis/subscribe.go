package redis

import (
	"context"
	"errors"
	"iter"
	"strconv"

	"github.com/breadai/bread/core"
	goredis "github.com/redis/go-redis/v9"
)

// readCount is the most entries one XRANGE or XREAD returns.
const readCount = 256

// Subscribe replays the frames of runID the stream retains with
// Seq > afterSeq, then tails the stream live, in order, until ctx is done,
// the consumer stops ranging or the transport closes (then it yields
// ErrClosed). It runs on the consumer's goroutine and starts none of its own.
//
// A lost connection is retried with backoff and the subscription resumes
// after the last entry it saw, so it survives a Redis restart; frames
// written while it reconnected arrive late, not never. A malformed entry
// is skipped with a warning. When the stream no longer holds a frame the
// subscription has not yielded (trimmed below the run's durable floor, or
// past MaxLen, before the subscription read it), it yields
// ErrSubscriberLagged and ends: the frames are in the crumb log, and the
// reader catches up from there.
func (t *Transport) Subscribe(ctx context.Context, runID string, afterSeq int64) iter.Seq2[core.Frame, error] {
	return func(yield func(core.Frame, error) bool) {
		if runID == "" {
			yield(core.Frame{}, &core.BreadError{Code: core.CodeValidationError, Message: "redis transport: Subscribe needs a run id"})
			return
		}
		if !t.enter() {
			yield(core.Frame{}, ErrClosed)
			return
		}
		defer t.leave()
		subCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(t.closed, cancel)()

		s := &subscription{
			t:          t,
			runID:      runID,
			key:        streamKey(t.opts.KeyPrefix, runID),
			afterSeq:   afterSeq,
			count:      min(readCount, t.opts.MaxLen),
			catchingUp: true,
		}
		defer s.untrack()
		if s.run(subCtx, yield) == endCancelled && ctx.Err() == nil && t.closed.Err() != nil {
			yield(core.Frame{}, ErrClosed)
		}
	}
}

// subscription is the state of one Subscribe range.
//
// Lag detection: each entry this transport writes names the entry before
// it in the run's stream (the field "prev"), so a subscription sees a gap
// directly: the first entry of a read must follow the last entry it read.
// Before its first entry, an entry whose predecessor is at or above where
// the subscription starts (afterSeq+1) shows that entries it wanted were
// trimmed. Where the predecessor is not known (the first entry a replica
// writes for a run, as when a resumed run continues on another replica),
// the entry's durable floor (the field "floor": the stream holds no frame
// below it) stands in: a floor above the subscription's position may have
// trimmed frames it had not read, and it ends with ErrSubscriberLagged, as
// it does for a gap.
type subscription struct {
	t        *Transport
	runID    string
	key      string
	afterSeq int64
	count    int64

	catchingUp  bool   // read snapshot pages, not XREAD
	tracked     bool   // counted in Transport.Subscribers
	passed      bool   // a frame with Seq > afterSeq was yielded
	lastID      string // the last stream entry read; "" before the first
	lastDurable int64  // seq of the last non-delta frame yielded
}

type ending int

const (
	endCancelled ending = iota // ctx done
	endConsumer                // the consumer stopped ranging
	endLagged                  // ErrSubscriberLagged was yielded
)

func (s *subscription) run(ctx context.Context, yield func(core.Frame, error) bool) ending {
	var rd *reader
	defer func() {
		if rd != nil {
			rd.close()
		}
	}()
	bo := newBackoff()
	for ctx.Err() == nil {
		if rd == nil {
			var err error
			if rd, err = s.t.openReader(ctx); err != nil {
				rd = nil
				if !s.retry(ctx, &bo, err) {
					break
				}
				continue
			}
		}
		var stopped bool
		var err error
		if s.catchingUp {
			stopped, err = s.page(ctx, rd, yield)
		} else {
			stopped, err = s.tail(ctx, rd, yield)
		}
		switch {
		case stopped:
			return endConsumer
		case errors.Is(err, ErrSubscriberLagged):
			yield(core.Frame{}, err)
			return endLagged
		case err != nil:
			rd.close()
			rd = nil
			if !s.retry(ctx, &bo, err) {
				return endCancelled
			}
		default:
			bo.reset()
		}
	}
	return endCancelled
}

// retry logs a read failure and waits out a backoff; false means ctx ended.
func (s *subscription) retry(ctx context.Context, bo *backoff, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	s.t.stats.readFailures.Add(1)
	s.t.log.warn("read", "redis transport: reading a run's stream failed; retrying", "key", s.key, "error", err)
	return sleepCtx(ctx, bo.delay())
}

// page reads the next entries after the last one read (the first page
// starts at afterSeq+1) and yields them. A short page means the
// subscription caught up: it tails from then on.
func (s *subscription) page(ctx context.Context, rd *reader, yield func(core.Frame, error) bool) (bool, error) {
	start := s.startID()
	if s.lastID != "" {
		next, ok := nextID(s.lastID)
		if !ok { // the largest possible id: nothing can follow
			s.startTail()
			return false, nil
		}
		start = next
	}
	msgs, err := rd.cmd.XRangeN(ctx, s.key, start, "+", s.count).Result()
	if err != nil {
		return false, err
	}
	if stopped, err := s.deliver(msgs, yield); stopped || err != nil {
		return stopped, err
	}
	if int64(len(msgs)) < s.count {
		s.startTail()
	}
	return false, nil
}

// startID is the first id the subscription wants: its entry ids are
// "<seq>-<n>", so the one of seq afterSeq+1.
func (s *subscription) startID() string {
	return strconv.FormatUint(uint64(max(s.afterSeq, 0))+1, 10) + "-0"
}

// tail waits for entries after the last one read (or from startID) and
// yields them.
func (s *subscription) tail(ctx context.Context, rd *reader, yield func(core.Frame, error) bool) (bool, error) {
	from := s.lastID
	if from == "" {
		// XREAD reads after an id: the last one below startID.
		from = strconv.FormatUint(uint64(max(s.afterSeq, 0)), 10) + "-18446744073709551615"
	}
	msgs, err := rd.xread(ctx, s.key, from, s.count)
	if err != nil {
		return false, err
	}
	return s.deliver(msgs, yield)
}

// follows reports whether m is the entry after the last one read (or,
// before the first, whether nothing the subscription wanted went before
// it); see subscription.
func (s *subscription) follows(m goredis.XMessage) bool {
	prev, known, floor := entryLinks(m.Values)
	switch {
	case s.lastID != "" && known:
		return compareIDs(prev, s.lastID) <= 0
	case s.lastID != "":
		ms, _, _ := splitID(s.lastID)
		return floor <= int64(min(ms, 1<<62))
	case known:
		return compareIDs(prev, s.startID()) < 0
	}
	return floor <= max(s.afterSeq, 0)+1
}

// deliver yields the frames of msgs newer than afterSeq; it reports whether
// the consumer stopped ranging, and ErrSubscriberLagged at a gap.
func (s *subscription) deliver(msgs []goredis.XMessage, yield func(core.Frame, error) bool) (bool, error) {
	for _, m := range msgs {
		if !s.follows(m) {
			return false, ErrSubscriberLagged
		}
		s.lastID = m.ID
		f, err := decodeEntry(m.Values)
		if err == nil && f.RunID != s.runID {
			err = &core.BreadError{Code: core.CodeProtocolDecodeError, Message: "malformed stream entry: a frame of run " + truncate(f.RunID, 64)}
		}
		if err != nil {
			s.t.stats.malformed.Add(1)
			s.t.log.warn("malformed", "redis transport: skipped a malformed stream entry", "key", s.key, "id", m.ID, "error", err)
			continue
		}
		// Frames arrive in seq order, so once one is newer than afterSeq
		// every later one is too. Filtering the tail as well covers frames
		// a lagging publisher writes after the subscription replayed.
		if !s.passed {
			if f.Seq <= s.afterSeq {
				continue
			}
			s.passed = true
		}
		// Every durable crumb takes a higher seq than the one before it
		// (deltas repeat theirs as a watermark), so a durable frame at or
		// below the last one yielded is a second copy. This transport's
		// own ids make Redis refuse a retried write; a stream written with
		// Redis's ids (an older bread) can still hold one.
		if f.Seq > 0 && !core.IsDelta(f.Crumb.CrumbType()) {
			if f.Seq <= s.lastDurable {
				s.t.stats.duplicates.Add(1)
				continue
			}
			s.lastDurable = f.Seq
		}
		if !yield(f, nil) {
			return true, nil
		}
	}
	return false, nil
}

func (s *subscription) startTail() {
	s.catchingUp = false
	if !s.tracked {
		s.tracked = true
		s.t.setTailing(s.runID, 1)
	}
}

func (s *subscription) untrack() {
	if s.tracked {
		s.t.setTailing(s.runID, -1)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
