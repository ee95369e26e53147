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
			t:         t,
			runID:     runID,
			key:       streamKey(t.opts.KeyPrefix, runID),
			afterSeq:  afterSeq,
			count:     min(readCount, t.opts.MaxLen),
			replaying: true,
		}
		defer s.untrack()
		if s.run(subCtx, yield) == endCancelled && ctx.Err() == nil && t.closed.Err() != nil {
			yield(core.Frame{}, ErrClosed)
		}
	}
}

// subscription is the state of one Subscribe range.
type subscription struct {
	t        *Transport
	runID    string
	key      string
	afterSeq int64
	count    int64

	replaying bool
	tracked   bool   // counted in Transport.Subscribers
	passed    bool   // a frame with Seq > afterSeq was yielded
	lastID    string // the last stream entry seen; "" before the first
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
		if s.replaying {
			stopped, err = s.replayPage(ctx, rd, yield)
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
	s.t.log.warn("read", "redis transport: reading a run's stream failed; retrying", "key", s.key, "error", err)
	return sleepCtx(ctx, bo.delay())
}

// replayPage reads the next page of what the stream retains. A short page
// ends the replay.
func (s *subscription) replayPage(ctx context.Context, rd *reader, yield func(core.Frame, error) bool) (bool, error) {
	start := "-"
	if s.lastID != "" {
		next, ok := nextID(s.lastID)
		if !ok {
			s.startTail()
			return false, nil
		}
		start = next
	}
	msgs, err := rd.cmd.XRangeN(ctx, s.key, start, "+", s.count).Result()
	if err != nil {
		return false, err
	}
	if s.lastID != "" && len(msgs) > 0 {
		if err := s.checkTrimmed(ctx, rd, s.lastID); err != nil {
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

// tail waits for entries after the last one seen and yields them.
func (s *subscription) tail(ctx context.Context, rd *reader, yield func(core.Frame, error) bool) (bool, error) {
	from := s.lastID
	if from == "" {
		from = "0-0"
	}
	msgs, err := rd.xread(ctx, s.key, from, s.count)
	if err != nil {
		return false, err
	}
	// Trimming can only have passed our position if at least MaxLen entries
	// followed it, and then this read comes back full.
	if int64(len(msgs)) == s.count {
		if err := s.checkTrimmed(ctx, rd, from); err != nil {
			return false, err
		}
	}
	return s.deliver(msgs, yield), nil
}

// checkTrimmed returns ErrSubscriberLagged if entries after id have been
// deleted, which for a bread stream means MAXLEN trimmed them unread. It
// runs after the read it guards, so trimming between the two cannot hide;
// trimming that reached into what was just read is reported too, which is
// right: a reader that far behind is about to lose frames. Redis before
// 7.0 does not report deletions and the check passes.
func (s *subscription) checkTrimmed(ctx context.Context, rd *reader, id string) error {
	info, err := rd.cmd.XInfoStream(ctx, s.key).Result()
	if err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return nil // expired meanwhile; what was read stands
		}
		return err
	}
	if info.MaxDeletedEntryID != "" && compareIDs(info.MaxDeletedEntryID, id) > 0 {
		return ErrSubscriberLagged
	}
	return nil
}

// deliver yields the frames of msgs newer than afterSeq; it reports whether
// the consumer stopped ranging.
func (s *subscription) deliver(msgs []goredis.XMessage, yield func(core.Frame, error) bool) bool {
	for _, m := range msgs {
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
		if !yield(f, nil) {
			return true
		}
	}
	return false
}

func (s *subscription) startTail() {
	s.replaying = false
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
