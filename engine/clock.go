package engine

import "time"

// Clock is the time by which the engine times leases, claims and
// heartbeats: a run's lease and its renewal, the sweep for runs whose lease
// lapsed, checkpoint claims, a background job finding its run's lease still
// live, and the wait for a session busy on another replica
// (Config.Clock). Crumb timestamps and durations read the real time.
//
// nil in Config is the real clock. Tests need no clock of their own to
// control time: the engine's tests run on testing/synctest's fake time
// with the real clock. A Clock serves a program or a test that must decide
// what time it is, say one that starts an Instance as if hours had passed.
type Clock interface {
	Now() time.Time
	// NewTimer is time.NewTimer.
	NewTimer(d time.Duration) Timer
	// NewTicker is time.NewTicker.
	NewTicker(d time.Duration) Ticker
}

// Timer is a Clock's *time.Timer.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// Ticker is a Clock's *time.Ticker.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// RealClock is the Clock of the time package, the one a nil Config.Clock
// means. A Clock of one's own can delegate its timers to it.
func RealClock() Clock { return realClock{} }

// realClock is the Clock of the time package.
type realClock struct{}

func (realClock) Now() time.Time                   { return time.Now() }
func (realClock) NewTimer(d time.Duration) Timer   { return realTimer{time.NewTimer(d)} }
func (realClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// nowMillis is the Instance clock's time in Unix milliseconds, as leases
// and claims are stored.
func (in *Instance) nowMillis() int64 { return in.clock.Now().UnixMilli() }
