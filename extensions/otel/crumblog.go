package otel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/breadai/bread/core"
)

// WrapStore returns store with its crumb log's appends timed
// (bread.crumblog.append.duration). The wrapper implements core's As, so
// the engine's core.Storage keeps every capability of the store; only the
// crumb log is the wrapper's own, and it is inline (core.InlineCrumbLog)
// exactly when the store's is: timing adds no I/O. A store that keeps no
// crumb log is returned as it is.
func (p *Plugin) WrapStore(store core.BreadStore) core.BreadStore {
	var log core.CrumbLog
	if store == nil || !core.As(store, &log) {
		return store
	}
	return &timedStore{BreadStore: store, log: &timedLog{CrumbLog: log, h: p.m.appendTime}}
}

// timedStore is a store whose crumb log is timed.
type timedStore struct {
	core.BreadStore
	log *timedLog
}

// As hands out the timed log for a core.CrumbLog, and finds everything
// else in the wrapped store.
func (s *timedStore) As(target any) bool {
	if t, ok := target.(*core.CrumbLog); ok {
		*t = s.log
		return true
	}
	return core.As(s.BreadStore, target)
}

type timedLog struct {
	core.CrumbLog
	h metric.Float64Histogram
}

var (
	appendOK     = metric.WithAttributes(attribute.String("bread.outcome", "ok"))
	appendFailed = metric.WithAttributes(attribute.String("bread.outcome", "error"))
)

func (l *timedLog) AppendCrumbs(ctx context.Context, entries []core.CrumbLogEntry) error {
	start := time.Now()
	err := l.CrumbLog.AppendCrumbs(ctx, entries)
	outcome := appendOK
	if err != nil {
		outcome = appendFailed
	}
	l.h.Record(ctx, time.Since(start).Seconds(), outcome)
	return err
}

// AppendsInline is the wrapped log's own: timing an append adds no I/O.
func (l *timedLog) AppendsInline() bool {
	var il core.InlineCrumbLog
	return core.As(l.CrumbLog, &il) && il.AppendsInline()
}
