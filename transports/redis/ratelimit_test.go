package redis

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestLimitedLog(t *testing.T) {
	var buf bytes.Buffer
	l := newLimitedLog(slog.New(slog.NewTextHandler(&buf, nil)), time.Hour)
	for range 5 {
		l.warn("a", "first kind")
	}
	l.warn("b", "second kind")
	out := buf.String()
	if n := strings.Count(out, "first kind"); n != 1 {
		t.Fatalf("logged %d times within the interval, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, "second kind") {
		t.Fatalf("one kind silenced another:\n%s", out)
	}

	buf.Reset()
	l.every = 0 // the interval has passed
	l.warn("a", "first kind")
	if !strings.Contains(buf.String(), "suppressed=4") {
		t.Fatalf("the next warning does not count the suppressed ones: %s", buf.String())
	}
}
