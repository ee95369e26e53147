// Package nats is a duplex core.BreadBus on NATS JetStream: the live crumb
// fabric between replicas of one bread app, for teams whose messaging
// system is NATS rather than Redis.
//
// Every run is one subject, <SubjectPrefix>.<run token> (bread.run.<runId>
// by default; a run id that is not a plain subject token is hex-encoded
// behind "="), in one JetStream stream (BREAD_RUNS) that captures
// <SubjectPrefix>.>. Publish appends the run's frames, one core/protocol
// CrumbFrame per message, each with a Nats-Msg-Id so a write retried after
// a lost acknowledgement is stored once. Subscribe replays the run's
// subject from the stream with an ordered consumer (frames with
// seq <= afterSeq are skipped), then keeps following it live, in per-run
// order. A subscription that wanted frames the stream has discarded
// (MaxBytes, MaxAge) ends with ErrSubscriberLagged (SUBSCRIBER_LAGGED)
// rather than skip them: each message names its place in the run
// (the Bread-Pos header), so a gap shows.
//
// The store is the durable history; the stream is liveness plus a replay
// of everything the store does not hold yet, kept for MaxAge (every frame,
// so whatever a run's durable floor, nothing a reader may need is gone
// before then). A NATS outage never fails a run: Publish hands frames to a
// bounded in-memory queue that one background goroutine writes in order,
// retrying with backoff, and a full queue drops its oldest frames (see
// Options.QueueSize). Subscriptions are recreated from the last stream
// sequence they saw, so they survive a server restart.
//
// The Coordinator makes replicas one service: run leases in a JetStream
// key-value bucket (a key per run, the bucket's TTL as the lease's),
// cancels that reach the replica running a run, and liveness for tails.
//
//	t, err := nats.New(nats.Options{URL: "nats://127.0.0.1:4222"})
//	...
//	in, err := engine.New(engine.Config{Store: store, Bus: t, ...})
//	err = in.Start(ctx) // checks NATS and creates the stream
//	defer in.Stop(ctx)  // closes t: drains the queue, ends subscriptions
package nats
