package nats_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/transporttest"
	bnats "github.com/breadai/bread/transports/nats"
)

func TestConformance(t *testing.T) {
	url := sharedNATSURL(t)
	transporttest.Run(t, transporttest.Features{Replay: true, Durable: true}, func(t *testing.T) core.BreadBus {
		return newTransport(t, url, bnats.Options{})
	})
}
