package webhook_test

import (
	"errors"
	"testing"
	"time"

	"github.com/breadai/bread/engine/webhook"
)

func TestVerify(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	body := []byte(`{"id":"run-1"}`)
	good := webhook.Sign("s3cret", at, body)
	cases := []struct {
		name, secret, header string
		body                 []byte
		now                  time.Time
		tolerance            time.Duration
		ok                   bool
	}{
		{"signed now", "s3cret", good, body, at, 5 * time.Minute, true},
		{"no age check", "s3cret", good, body, at.Add(24 * time.Hour), 0, true},
		{"another secret", "other", good, body, at, 5 * time.Minute, false},
		{"another body", "s3cret", good, []byte(`{"id":"run-2"}`), at, 5 * time.Minute, false},
		{"too old", "s3cret", good, body, at.Add(6 * time.Minute), 5 * time.Minute, false},
		{"from the future", "s3cret", good, body, at.Add(-6 * time.Minute), 5 * time.Minute, false},
		{"no timestamp", "s3cret", good[len("t=1700000000,"):], body, at, 0, false},
		{"no v1", "s3cret", "t=1700000000", body, at, 0, false},
		{"not hex", "s3cret", "t=1700000000,v1=zz", body, at, 0, false},
		{"empty", "s3cret", "", body, at, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := webhook.Verify(c.secret, c.header, c.body, c.now, c.tolerance)
			if c.ok != (err == nil) {
				t.Fatalf("Verify = %v, want ok=%v", err, c.ok)
			}
			if err != nil && !errors.Is(err, webhook.ErrBadSignature) {
				t.Fatalf("Verify = %v, want ErrBadSignature", err)
			}
		})
	}
}
