// Package stream is the embedded duplex transport: in-process fan-out for a
// single replica, with a replay buffer per run bounded by size and a bounded
// number of tracked runs (the least recently published run is forgotten
// first).
//
// It is what an Instance uses when Config.Transport is nil. A run's buffer
// never drops a frame at or above the run's Frame.Durable floor, which the
// choke point raises as the crumb log commits: the log holds every frame
// below the floor and the buffer every frame above it, so a reader that
// subscribes, then reads the log, then drains the subscription misses
// nothing. Below the floor the buffer keeps what MaxBytesPerRun allows (the
// only replay of a run with no crumb log). Publish never blocks on a slow
// subscriber: a subscriber that falls MaxSubscriberLag frames behind is
// ended with ErrSlowSubscriber and can catch up from the store.
package stream
