package nats

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/protocol"
)

// consumerIdle is how long the server keeps the consumer of a subscription
// whose client vanished (a killed replica) before it removes it.
const consumerIdle = time.Minute

// Subscribe replays the frames of runID the stream holds with
// Seq > afterSeq, then follows the run's subject live, in order, until ctx
// is done, the consumer stops ranging or the transport closes (then it
// yields ErrClosed). It runs on the consumer's goroutine; the NATS client
// delivers to it from its own.
//
// The subscription is a JetStream ordered consumer filtered on the run's
// subject. A lost connection, a restarted server or a missed heartbeat
// recreates it from the stream sequence after the last message it saw, so
// frames written meanwhile arrive late, not never. A malformed message is
// skipped with a warning.
func (t *Transport) Subscribe(ctx context.Context, runID string, afterSeq int64) iter.Seq2[core.Frame, error] {
	return func(yield func(core.Frame, error) bool) {
		if runID == "" {
			yield(core.Frame{}, &core.BreadError{Code: core.CodeValidationError, Message: "nats transport: Subscribe needs a run id"})
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

		s := &subscription{t: t, runID: runID, subject: t.Subject(runID), afterSeq: afterSeq}
		defer s.untrack()
		if !s.run(subCtx, yield) && ctx.Err() == nil && t.closed.Err() != nil {
			yield(core.Frame{}, ErrClosed)
		}
	}
}

// subscription is the state of one Subscribe range.
type subscription struct {
	t        *Transport
	runID    string
	subject  string
	afterSeq int64

	tracked     bool   // counted in Transport.Subscribers
	passed      bool   // a frame with Seq > afterSeq was yielded
	streamSeq   uint64 // the stream sequence of the last message read
	lastDurable int64  // seq of the last non-delta frame yielded

	// The position (posHeader) of the last message read that had one.
	read  bool
	epoch string
	index uint64
}

// run consumes until ctx ends (false) or the consumer stops ranging (true).
func (s *subscription) run(ctx context.Context, yield func(core.Frame, error) bool) bool {
	bo := newBackoff()
	for ctx.Err() == nil {
		stopped, err := s.consume(ctx, yield)
		if stopped {
			return true
		}
		if errors.Is(err, ErrSubscriberLagged) {
			yield(core.Frame{}, err)
			return true
		}
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			s.t.stats.readFailures.Add(1)
			s.t.log.warn("read", "nats transport: following a run's subject failed; retrying", "subject", s.subject, "error", err)
		}
		if !sleepCtx(ctx, bo.delay()) {
			break
		}
	}
	return false
}

// consume creates an ordered consumer from where the subscription is and
// yields its messages until it fails, ctx ends or the consumer stops.
func (s *subscription) consume(ctx context.Context, yield func(core.Frame, error) bool) (bool, error) {
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{s.subject},
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		InactiveThreshold: consumerIdle,
	}
	if s.streamSeq > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = s.streamSeq + 1
	}
	cons, err := s.t.js.OrderedConsumer(ctx, s.t.opts.Stream, cfg)
	if err != nil {
		return false, err
	}
	it, err := cons.Messages()
	if err != nil {
		return false, err
	}
	defer it.Stop()
	defer context.AfterFunc(ctx, it.Stop)()
	s.track()
	for {
		msg, err := it.Next()
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) && ctx.Err() != nil {
				return false, nil
			}
			return false, err
		}
		if md, err := msg.Metadata(); err == nil {
			s.streamSeq = md.Sequence.Stream
		}
		f, err := protocol.DecodeCrumbFrame(msg.Data())
		if err == nil && f.RunID != s.runID {
			err = &core.BreadError{Code: core.CodeProtocolDecodeError, Message: "malformed message: a frame of run " + truncate(f.RunID, 64)}
		}
		if err != nil {
			s.t.stats.malformed.Add(1)
			s.t.log.warn("malformed", "nats transport: skipped a malformed message", "subject", s.subject, "streamSeq", s.streamSeq, "error", err)
			continue
		}
		switch s.follows(msg.Headers().Get(posHeader), f) {
		case posLagged:
			return false, ErrSubscriberLagged
		case posDuplicate:
			s.t.stats.duplicates.Add(1)
			continue
		}
		if !s.wanted(f) {
			continue
		}
		if !yield(f, nil) {
			return true, nil
		}
	}
}

type posCheck int

const (
	posNext      posCheck = iota // the message follows the last one read
	posDuplicate                 // a second copy of a message already read
	posLagged                    // the stream discarded frames the subscription wanted
)

// follows checks f's position (its posHeader value) against the last
// message read: a frame the stream discarded (MaxBytes, MaxAge) before the
// subscription read it would otherwise be skipped without a trace. A gap
// matters only when a missing frame is one the subscriber asked for
// (Seq > afterSeq); the missing ones of an epoch have seqs up to the
// prevSeq of the frame after them. The first frame of an epoch links to
// nothing: as the first message a subscription reads it is the run's
// first frame the stream still holds, which follows afterSeq only when its
// Seq is at most afterSeq+1 (a run's frames start at 1; an epoch resumed
// later continues from the last seq of the one before). The tail of an
// epoch discarded just before the next epoch's first frame is not seen.
// Messages without a position (another writer's) are not checked.
func (s *subscription) follows(v string, f core.Frame) posCheck {
	epoch, i, prevSeq, ok := parsePos(v)
	if !ok {
		return posNext
	}
	sameEpoch := s.read && epoch == s.epoch
	if sameEpoch && i <= s.index {
		return posDuplicate
	}
	var lagged bool
	switch {
	case sameEpoch && i > s.index+1, !sameEpoch && i > 1:
		lagged = prevSeq > s.afterSeq
	case !s.read:
		lagged = f.Seq > max(s.afterSeq, 0)+1
	}
	if lagged {
		return posLagged
	}
	s.read, s.epoch, s.index = true, epoch, i
	return posNext
}

// wanted filters the frames the subscriber asked to skip and the second
// copies of durable frames.
func (s *subscription) wanted(f core.Frame) bool {
	// Frames arrive in seq order, so once one is newer than afterSeq
	// every later one is too.
	if !s.passed {
		if f.Seq <= s.afterSeq {
			return false
		}
		s.passed = true
	}
	// Every durable crumb takes a higher seq than the one before it
	// (deltas repeat theirs as a watermark), so a durable frame at or
	// below the last one yielded is a second copy (a write the stream
	// stored twice, past its duplicate window).
	if f.Seq > 0 && !core.IsDelta(f.Crumb.CrumbType()) {
		if f.Seq <= s.lastDurable {
			s.t.stats.duplicates.Add(1)
			return false
		}
		s.lastDurable = f.Seq
	}
	return true
}

func (s *subscription) track() {
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
