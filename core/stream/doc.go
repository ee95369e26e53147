// Package stream is the embedded duplex transport: in-process fan-out for a
// single replica, with a bounded replay buffer per run and a bounded number
// of tracked runs (the least recently published run is forgotten first).
//
// It is what an Instance uses when Config.Transport is nil. Replay is a
// convenience for a client reconnecting to the same process; catch-up after
// a restart comes from the store's crumb log. Publish never blocks on a slow
// subscriber: a subscriber that falls MaxSubscriberLag frames behind is ended
// with ErrSlowSubscriber and can catch up from the store.
package stream
