// Package redis is a duplex core.BreadBus on Redis Streams: the live
// crumb fabric between replicas of one bread app.
//
// Every run is one stream, bread:run:{<runId>} (the braces are a Redis
// Cluster hash tag, so a run's stream lives on one slot). Publish appends
// the run's frames, one core/protocol CrumbFrame per entry in the field
// "frame", under ids "<seq>-<n>", trimming the stream to the frames at or
// above the run's durable floor (XADD MINID ~; MAXLEN ~ N for a run with no
// floor); the stream expires a while after the run's terminal crumb.
// Subscribe replays what the stream still retains with seq > afterSeq, then
// tails it with XREAD BLOCK, in per-run order, and ends with
// ErrSubscriberLagged rather than skip a frame it has not yielded.
//
// The store is the durable history; the stream is liveness plus a replay
// of everything the store does not hold yet. A Redis outage therefore never fails a run: Publish hands frames to
// a bounded in-memory queue that one background goroutine writes in order,
// retrying with backoff, and a full queue drops its oldest frames (see
// Options.QueueSize). Subscriptions retry with backoff and resume from the
// last stream id they saw.
//
//	t, err := redis.New(redis.Options{URL: "redis://127.0.0.1:6379/0"})
//	...
//	in, err := engine.New(engine.Config{Store: store, Transport: t, ...})
//	err = in.Start(ctx) // pings Redis
//	defer in.Stop(ctx)  // closes t: drains the queue, ends subscriptions
package redis
