package redis

import (
	"log/slog"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Options configure a Transport. Zero values take the defaults; a negative
// TTL or IdleTTL disables that expiry.
type Options struct {
	// URL is a go-redis connection URL (redis://, rediss://, unix://), for
	// example redis://user:pass@host:6379/0?dial_timeout=3s. The transport
	// dials two clients from it, one for writes and one for subscriptions,
	// and closes both on Close. Exactly one of URL and Client is required.
	URL string
	// Client is a client the caller owns (a *goredis.Client, a failover or
	// cluster client, ...). Close leaves it open. Each live subscription
	// holds one of its connections, so size its PoolSize above the number
	// of concurrent subscriptions plus a few for publishing.
	//
	// With a *goredis.Client (standalone or failover), a subscription reads
	// on a dedicated connection and a cancelled context interrupts its
	// XREAD BLOCK at once (CLIENT UNBLOCK). With a cluster or ring client a
	// cancelled subscription ends within BlockTimeout.
	Client goredis.UniversalClient

	// KeyPrefix starts every stream key: KeyPrefix + "{" + runID + "}".
	// Default "bread:run:".
	KeyPrefix string
	// MaxLen is the approximate number of entries the stream of a run
	// with no durable floor retains (XADD MAXLEN ~): a store without a
	// crumb log, a run whose logging failed. Redis trims whole nodes, so a
	// stream may hold somewhat more. A run with a floor keeps every frame
	// at or above it instead (XADD MINID ~). Default 1000.
	MaxLen int64
	// TTL is how long a run's stream lives after its terminal crumb
	// (agent:run:end or agent:error). Default one hour.
	TTL time.Duration
	// IdleTTL is refreshed on every write to a run's stream, so the stream
	// of a run that never ends (its replica died) is removed too. Default
	// 24 hours.
	IdleTTL time.Duration
	// BlockTimeout is the XREAD BLOCK timeout of a tailing subscription.
	// Default 5s.
	BlockTimeout time.Duration

	// QueueSize bounds the frames waiting to be written (default 10000);
	// QueueBytes bounds their encoded size (default 64 MiB). When the queue
	// is full, Publish waits up to PublishTimeout for room while Redis is
	// healthy, then drops the oldest frames with a warning. While Redis is
	// failing it drops at once. Frames are written in the order they were
	// published, so per-run order holds for everything not dropped.
	QueueSize  int
	QueueBytes int
	// PublishTimeout is the longest Publish waits for room in a full queue.
	// Default 250ms.
	PublishTimeout time.Duration
	// BatchSize is the most frames written in one pipeline. Default 256.
	BatchSize int
	// CloseTimeout bounds how long Close drains the queue and waits for
	// subscriptions to end. Default 5s.
	CloseTimeout time.Duration
	// ReadPoolSize is the connection pool of the subscription client the
	// transport dials from URL: one connection per live subscription.
	// Default 1000. Ignored with Client.
	ReadPoolSize int

	// Logger receives warnings (rate-limited). Default slog.Default().
	Logger *slog.Logger
}

const (
	defaultKeyPrefix      = "bread:run:"
	defaultMaxLen         = 1000
	defaultTTL            = time.Hour
	defaultIdleTTL        = 24 * time.Hour
	defaultBlockTimeout   = 5 * time.Second
	defaultQueueSize      = 10000
	defaultQueueBytes     = 64 << 20
	defaultPublishTimeout = 250 * time.Millisecond
	defaultBatchSize      = 256
	defaultCloseTimeout   = 5 * time.Second
	defaultReadPoolSize   = 1000
	// batchBytes caps one pipeline's payload, so a few huge frames do not
	// make one write slow enough to trip the client's timeouts.
	batchBytes = 4 << 20
)

// withDefaults validates o and fills in the defaults.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.URL == "" && o.Client == nil:
		return o, invalidConfig("set Options.URL or Options.Client")
	case o.URL != "" && o.Client != nil:
		return o, invalidConfig("set only one of Options.URL and Options.Client")
	case o.MaxLen < 0, o.QueueSize < 0, o.QueueBytes < 0, o.BatchSize < 0, o.ReadPoolSize < 0:
		return o, invalidConfig("MaxLen, QueueSize, QueueBytes, BatchSize and ReadPoolSize must not be negative")
	case o.BlockTimeout < 0, o.PublishTimeout < 0, o.CloseTimeout < 0:
		return o, invalidConfig("BlockTimeout, PublishTimeout and CloseTimeout must not be negative")
	case o.BlockTimeout > 0 && o.BlockTimeout < time.Millisecond:
		return o, invalidConfig("BlockTimeout must be at least 1ms (XREAD BLOCK counts milliseconds)")
	case strings.ContainsAny(o.KeyPrefix, "{}"):
		// A brace in the prefix would move the cluster hash tag off the run id.
		return o, invalidConfig("KeyPrefix must not contain { or }")
	}
	if o.KeyPrefix == "" {
		o.KeyPrefix = defaultKeyPrefix
	}
	o.MaxLen = orDefault(o.MaxLen, defaultMaxLen)
	o.TTL = orDefault(o.TTL, defaultTTL)
	o.IdleTTL = orDefault(o.IdleTTL, defaultIdleTTL)
	o.BlockTimeout = orDefault(o.BlockTimeout, defaultBlockTimeout)
	o.QueueSize = orDefault(o.QueueSize, defaultQueueSize)
	o.QueueBytes = orDefault(o.QueueBytes, defaultQueueBytes)
	o.PublishTimeout = orDefault(o.PublishTimeout, defaultPublishTimeout)
	o.BatchSize = orDefault(o.BatchSize, defaultBatchSize)
	o.CloseTimeout = orDefault(o.CloseTimeout, defaultCloseTimeout)
	o.ReadPoolSize = orDefault(o.ReadPoolSize, defaultReadPoolSize)
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
