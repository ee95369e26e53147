package redis_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core/protocol"
	bredis "github.com/breadai/bread/transports/redis"
	goredis "github.com/redis/go-redis/v9"
)

// malformedEntries are stream entries a subscriber must skip. They are
// written with a raw client, bypassing Publish.
func malformedEntries(run string) map[string][]any {
	return map[string][]any{
		"not JSON":           {"frame", "not-json{"},
		"empty":              {"frame", ""},
		"wrong version":      {"frame", `{"v":2,"type":"crumb","runId":"` + run + `","seq":5,"crumb":{"type":"tool:input:end","toolCallId":"c"}}`},
		"no frame field":     {"payload", "x"},
		"subscribe frame":    {"frame", `{"v":1,"type":"subscribe","runId":"` + run + `","afterSeq":0}`},
		"unknown crumb type": {"frame", `{"v":1,"type":"crumb","runId":"` + run + `","seq":5,"crumb":{"type":"bogus"}}`},
		"another run's frame": {"frame", `{"v":1,"type":"crumb","runId":"someone-else","seq":5,` +
			`"crumb":{"type":"tool:input:end","agentId":"a","runId":"someone-else","sessionId":"s","timestamp":1,"toolCallId":"c"}}`},
	}
}

func xaddValid(t *testing.T, c *goredis.Client, key, run string, seq int64) {
	t.Helper()
	raw, err := protocol.EncodeCrumbFrame(frame(run, seq))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.XAdd(context.Background(), &goredis.XAddArgs{Stream: key, Values: []any{"frame", raw}}).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedEntriesAreSkipped(t *testing.T) {
	url := sharedRedisURL(t)
	c := rawClient(t, url)
	defer c.Close()

	for _, phase := range []string{"replay", "tail"} {
		t.Run(phase, func(t *testing.T) {
			var logs logBuffer
			tr := newTransport(t, url, bredis.Options{Logger: newLogger(&logs)})
			run := runID(t)
			key := tr.StreamKey(run)
			write := func() {
				seq := int64(1)
				xaddValid(t, c, key, run, seq)
				for _, values := range malformedEntries(run) {
					if err := c.XAdd(context.Background(), &goredis.XAddArgs{Stream: key, Values: values}).Err(); err != nil {
						t.Fatal(err)
					}
					seq++
					xaddValid(t, c, key, run, seq)
				}
			}
			var sub *collector
			if phase == "replay" {
				write()
				sub = collect(t, tr, run, 0)
			} else {
				sub = collect(t, tr, run, 0)
				waitFor(t, 10*time.Second, "the subscription to tail", func() bool { return tr.Subscribers(run) == 1 })
				write()
			}
			n := len(malformedEntries(run))
			sub.waitSeqs(t, 10*time.Second, seqRange(1, int64(n+1))...)
			if got := tr.Stats().Malformed; got != uint64(n) {
				t.Fatalf("Stats().Malformed = %d, want %d", got, n)
			}
			if errs := sub.errors(); len(errs) > 0 {
				t.Fatalf("a malformed entry reached the consumer as an error: %v", errs)
			}
			log := logs.String()
			if !strings.Contains(log, "skipped a malformed stream entry") || !strings.Contains(log, key) {
				t.Fatalf("no warning naming the stream; log:\n%s", log)
			}
		})
	}
}

func TestWrongTypeKeyDoesNotWedgeThePublisher(t *testing.T) {
	url := sharedRedisURL(t)
	c := rawClient(t, url)
	defer c.Close()
	var logs logBuffer
	tr := newTransport(t, url, bredis.Options{Logger: newLogger(&logs)})
	poisoned, healthy := runID(t), runID(t)
	if err := c.Set(context.Background(), tr.StreamKey(poisoned), "not a stream", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	publishRange(t, tr, poisoned, 1, 2)
	publishRange(t, tr, healthy, 1, 2)
	flush(t, tr)
	if st := tr.Stats(); st.Dropped != 2 || st.Written != 2 {
		t.Fatalf("stats %+v: want the 2 frames Redis refused dropped and the other run's 2 written", st)
	}
	if !strings.Contains(logs.String(), "WRONGTYPE") {
		t.Fatalf("no warning about the refused frames; log:\n%s", logs.String())
	}
	sub := collect(t, tr, healthy, 0)
	sub.waitSeqs(t, 10*time.Second, 1, 2)
}

func TestDuplicateDurableFramesAreSkipped(t *testing.T) {
	url := sharedRedisURL(t)
	c := rawClient(t, url)
	defer c.Close()
	tr := newTransport(t, url, bredis.Options{})
	run := runID(t)
	key := tr.StreamKey(run)
	// A write retried across a reconnect repeats frames Redis already has.
	for _, seq := range []int64{1, 2, 3, 2, 3, 4} {
		xaddValid(t, c, key, run, seq)
	}
	sub := collect(t, tr, run, 0)
	sub.waitSeqs(t, 10*time.Second, 1, 2, 3, 4)
	if got := tr.Stats().Duplicates; got != 2 {
		t.Fatalf("Stats().Duplicates = %d, want 2", got)
	}
}
