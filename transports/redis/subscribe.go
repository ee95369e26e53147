package redis

import (
	"context"
	"errors"
	"iter"
	"strings"

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
// is skipped with a warning. A subscription that fell so far behind that
// MAXLEN trimmed frames it had not read yields ErrSubscriberLagged and ends.
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
// Lag detection: MAXLEN trims a stream from its head, so a subscriber that
// falls MaxLen entries behind would silently skip frames. Entries carry no
// counter of their own, but Redis 7 counts every entry ever added
// (entries-added), which numbers them: the first retained entry is number
// entriesAdded-length+1. The subscription keeps the number of the last entry
// it read (ord); reading a page together with those counters in one
// MULTI/EXEC shows exactly whether entries between its position and the
// first retained one were trimmed. A non-full XREAD cannot have been trimmed
// past (MAXLEN ~ keeps at least MaxLen >= count entries), so the counters are
// read only while catching up: during the replay and after a full XREAD.
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
	ord         int64  // the number of the last entry read, when ordKnown
	ordKnown    bool
	lastDurable int64 // seq of the last non-delta frame yielded
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

// page reads the next entries after the last one read, with the stream's
// counters, and yields them. A short page means the subscription caught up:
// it tails from then on.
func (s *subscription) page(ctx context.Context, rd *reader, yield func(core.Frame, error) bool) (bool, error) {
	start := "-"
	if s.lastID != "" {
		next, ok := nextID(s.lastID)
		if !ok { // the largest possible id: nothing can follow
			s.startTail()
			return false, nil
		}
		start = next
	}
	var rng *goredis.XMessageSliceCmd
	var info *goredis.XInfoStreamCmd
	_, _ = rd.cmd.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		rng = p.XRangeN(ctx, s.key, start, "+", s.count)
		info = p.XInfoStream(ctx, s.key)
		return nil
	})
	msgs, err := rng.Result()
	if err != nil {
		return false, err
	}
	st, err := info.Result()
	switch {
	case err != nil && isNoSuchKey(err):
		// No stream yet (or it expired): its first entry will be number 1.
		s.ord, s.ordKnown = 0, true
	case err != nil:
		return false, err
	default:
		if err := s.account(msgs, st); err != nil {
			return false, err
		}
	}
	if s.deliver(msgs, yield) {
		return true, nil
	}
	if int64(len(msgs)) < s.count {
		s.startTail()
	}
	return false, nil
}

// account checks a snapshot page against the stream's counters and sets
// ord to the number of the entry before the page.
func (s *subscription) account(msgs []goredis.XMessage, st *goredis.XInfoStream) error {
	if st.EntriesAdded <= 0 { // Redis before 7.0 does not count; no detection
		s.ordKnown = false
		return nil
	}
	if len(msgs) == 0 {
		s.ord, s.ordKnown = st.EntriesAdded, true // everything retained was read
		return nil
	}
	if msgs[0].ID != st.FirstEntry.ID {
		// The page continues right after the last entry read, which is
		// still retained: nothing was skipped, ord stands.
		return nil
	}
	first := st.EntriesAdded - st.Length + 1
	// Entries before the first retained one were trimmed; any that came
	// after the last one read were lost to this subscriber. The first page
	// of a replay knows no position yet and loses nothing: replay covers
	// what is retained. A stream that was recreated (Redis restarted empty,
	// or the key expired) numbers from 1 again, which resynchronises ord.
	if s.ordKnown && first > s.ord+1 {
		return ErrSubscriberLagged
	}
	s.ord, s.ordKnown = first-1, true
	return nil
}

// tail waits for entries after the last one read and yields them. A full
// read may have been trimmed past, so it is read again as a checked page.
func (s *subscription) tail(ctx context.Context, rd *reader, yield func(core.Frame, error) bool) (bool, error) {
	from := s.lastID
	if from == "" {
		from = "0-0"
	}
	msgs, err := rd.xread(ctx, s.key, from, s.count)
	if err != nil {
		return false, err
	}
	if int64(len(msgs)) == s.count {
		s.catchingUp = true
		return false, nil
	}
	return s.deliver(msgs, yield), nil
}

func isNoSuchKey(err error) bool { return strings.Contains(err.Error(), "no such key") }

// deliver yields the frames of msgs newer than afterSeq; it reports whether
// the consumer stopped ranging.
func (s *subscription) deliver(msgs []goredis.XMessage, yield func(core.Frame, error) bool) bool {
	for _, m := range msgs {
		s.lastID = m.ID
		s.ord++
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
		// below the last one yielded is a second copy: a pipeline that
		// Redis applied but whose reply the publisher lost is written
		// again. Deltas cannot be told apart and stay at-least-once.
		if f.Seq > 0 && !core.IsDelta(f.Crumb.CrumbType()) {
			if f.Seq <= s.lastDurable {
				s.t.stats.duplicates.Add(1)
				continue
			}
			s.lastDurable = f.Seq
		}
		if !yield(f, nil) {
			return true
		}
	}
	return false
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
