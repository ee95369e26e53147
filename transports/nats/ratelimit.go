package nats

import (
	"log/slog"
	"sync"
	"time"
)

// logEvery is how often one kind of warning is logged; the ones in between
// are counted and reported with the next. A NATS outage would otherwise
// log once per frame and per subscription retry.
const logEvery = 10 * time.Second

// limitedLog logs each kind of warning at most once per interval.
type limitedLog struct {
	log   *slog.Logger
	every time.Duration

	mu    sync.Mutex
	kinds map[string]*logState // keyed by a fixed set of kinds, so bounded
}

type logState struct {
	last       time.Time
	suppressed int
}

func newLimitedLog(l *slog.Logger, every time.Duration) *limitedLog {
	return &limitedLog{log: l, every: every, kinds: make(map[string]*logState)}
}

// warn logs msg unless a warning of this kind was logged within the interval.
func (l *limitedLog) warn(kind, msg string, args ...any) {
	now := time.Now()
	l.mu.Lock()
	st := l.kinds[kind]
	if st == nil {
		st = &logState{}
		l.kinds[kind] = st
	}
	if !st.last.IsZero() && now.Sub(st.last) < l.every {
		st.suppressed++
		l.mu.Unlock()
		return
	}
	suppressed := st.suppressed
	st.last, st.suppressed = now, 0
	l.mu.Unlock()
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	l.log.Warn(msg, args...)
}
