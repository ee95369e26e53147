package stream_test

import (
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/stream"
	"github.com/breadai/bread/core/transporttest"
)

func TestConformance(t *testing.T) {
	transporttest.Run(t, transporttest.Features{Replay: true}, func(t *testing.T) core.BreadTransport {
		return stream.New(stream.Options{MaxSubscriberLag: 50000})
	})
}
