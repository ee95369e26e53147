package redis_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/transporttest"
	bredis "github.com/breadai/bread/transports/redis"
)

func TestConformance(t *testing.T) {
	url := sharedRedisURL(t)
	transporttest.Run(t, transporttest.Features{Replay: true, Durable: true}, func(t *testing.T) core.BreadBus {
		return newTransport(t, url, bredis.Options{
			// The suite bursts 20000 frames past a subscriber that stopped
			// reading while another keeps up. A Redis stream is every
			// subscriber's buffer, so its retention must cover the burst, as
			// core/stream's MaxSubscriberLag does; with the default 1000 a
			// subscriber slowed by the race detector would (rightly) end
			// with ErrSubscriberLagged.
			MaxLen: 30000,
		})
	})
}
