package nats

import (
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// Options configure a Transport. Zero values take the defaults.
type Options struct {
	// URL is a NATS server URL, or several separated by commas
	// (nats://user:pass@host:4222, tls://host:4222). The transport dials one
	// connection from it, reconnecting for ever, and closes it on Close.
	// Exactly one of URL and Conn is required.
	URL string
	// Conn is a connection the caller owns; Close leaves it open. Give it
	// nats.MaxReconnects(-1), or a long outage ends the transport's use of it.
	Conn *nats.Conn

	// Stream names the JetStream stream holding every run's frames.
	// Default "BREAD_RUNS". Replicas of one app share it.
	Stream string
	// SubjectPrefix starts every run's subject: SubjectPrefix + "." + run.
	// Default "bread.run". The stream captures SubjectPrefix + ".>", so two
	// apps on one NATS take different prefixes and streams.
	SubjectPrefix string
	// MaxAge is how long the stream keeps a frame (default 24 hours): a
	// tail or a reconnect replays from it up to then, the crumb log after.
	MaxAge time.Duration
	// MaxBytes bounds the stream's size; past it the oldest frames of any
	// run go first. Default unlimited (-1): frames above a run's durable
	// floor must stay for as long as the crumb log lacks them, so a bound
	// here is a trade against that guarantee under pressure.
	MaxBytes int64
	// Memory keeps the stream in the server's memory instead of its files:
	// faster, but a server restart loses the frames a tail would replay.
	Memory bool
	// Replicas is the stream's replica count in a NATS cluster. Default 1.
	Replicas int

	// QueueSize bounds the frames waiting to be written (default 10000);
	// QueueBytes bounds their encoded size (default 64 MiB). When the queue
	// is full, Publish waits up to PublishTimeout for room while NATS is
	// healthy, then drops the oldest frames with a warning. While NATS is
	// failing it drops at once.
	QueueSize  int
	QueueBytes int
	// PublishTimeout is the longest Publish waits for room in a full queue.
	// Default 250ms.
	PublishTimeout time.Duration
	// AckTimeout is how long a write waits for JetStream's acknowledgement
	// before it is retried. Default 5s.
	AckTimeout time.Duration
	// BatchSize is the most frames in flight at once. Default 256.
	BatchSize int
	// CloseTimeout bounds how long Close drains the queue and waits for
	// subscriptions to end. Default 5s.
	CloseTimeout time.Duration

	// Logger receives warnings (rate-limited). Default slog.Default().
	Logger *slog.Logger
}

const (
	defaultStream         = "BREAD_RUNS"
	defaultSubjectPrefix  = "bread.run"
	defaultMaxAge         = 24 * time.Hour
	defaultQueueSize      = 10000
	defaultQueueBytes     = 64 << 20
	defaultPublishTimeout = 250 * time.Millisecond
	defaultAckTimeout     = 5 * time.Second
	defaultBatchSize      = 256
	defaultCloseTimeout   = 5 * time.Second
	// batchBytes caps the payload in flight at once.
	batchBytes = 4 << 20
)

// withDefaults validates o and fills in the defaults.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.URL == "" && o.Conn == nil:
		return o, invalidConfig("set Options.URL or Options.Conn")
	case o.URL != "" && o.Conn != nil:
		return o, invalidConfig("set only one of Options.URL and Options.Conn")
	case o.QueueSize < 0, o.QueueBytes < 0, o.BatchSize < 0, o.Replicas < 0:
		return o, invalidConfig("QueueSize, QueueBytes, BatchSize and Replicas must not be negative")
	case o.MaxAge < 0, o.PublishTimeout < 0, o.AckTimeout < 0, o.CloseTimeout < 0:
		return o, invalidConfig("MaxAge, PublishTimeout, AckTimeout and CloseTimeout must not be negative")
	case o.SubjectPrefix != "" && !validSubjectPrefix(o.SubjectPrefix):
		return o, invalidConfig("SubjectPrefix must be dot-separated tokens without wildcards or spaces")
	case strings.ContainsAny(o.Stream, ".*> \t\r\n/\\"):
		return o, invalidConfig("Stream must be a JetStream stream name (no '.', '*', '>', '/', '\\' or spaces)")
	}
	if o.Stream == "" {
		o.Stream = defaultStream
	}
	if o.SubjectPrefix == "" {
		o.SubjectPrefix = defaultSubjectPrefix
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = -1
	}
	o.MaxAge = orDefault(o.MaxAge, defaultMaxAge)
	o.Replicas = orDefault(o.Replicas, 1)
	o.QueueSize = orDefault(o.QueueSize, defaultQueueSize)
	o.QueueBytes = orDefault(o.QueueBytes, defaultQueueBytes)
	o.PublishTimeout = orDefault(o.PublishTimeout, defaultPublishTimeout)
	o.AckTimeout = orDefault(o.AckTimeout, defaultAckTimeout)
	o.BatchSize = orDefault(o.BatchSize, defaultBatchSize)
	o.CloseTimeout = orDefault(o.CloseTimeout, defaultCloseTimeout)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}
