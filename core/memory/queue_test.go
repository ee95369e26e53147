package memory_test

import (
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/jobtest"
	"github.com/breadai/bread/core/memory"
)

func TestQueueConformance(t *testing.T) {
	jobtest.Run(t, jobtest.Harness{
		New: func(t *testing.T) core.JobQueue {
			return memory.NewQueue(memory.QueueOptions{
				Concurrency:  4,
				RetryBackoff: func(int) time.Duration { return 100 * time.Millisecond },
			})
		},
		Quiet:  time.Second,
		Bubble: true, // backoffs and quiet windows pass in fake time
	})
}
