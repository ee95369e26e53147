package otel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/breadai/bread/core"
)

// ObserveCrumbLog implements the engine's CrumbLogObserver: appends to the
// crumb log are timed (bread.crumblog.append.duration).
func (p *Plugin) ObserveCrumbLog(l core.CrumbLog) core.CrumbLog {
	return &timedLog{CrumbLog: l, h: p.m.appendTime}
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
