package riverjobs

import (
	"time"

	"github.com/riverqueue/river/rivertype"
)

// retryPolicy is Options.RetryBackoff as River's ClientRetryPolicy.
type retryPolicy struct {
	backoff func(attempt int) time.Duration
}

func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(max(p.backoff(job.Attempt), 0))
}
