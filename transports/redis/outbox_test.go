package redis

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func item(s string) pending { return pending{key: "k", payload: []byte(s)} }

func payloads(ps []pending) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p.payload)
	}
	return out
}

func TestOutboxKeepsOrderAndDropsOldest(t *testing.T) {
	cases := []struct {
		name      string
		maxItems  int
		maxBytes  int
		push      []string
		wantQueue []string
		dropped   int
	}{
		{"fits", 5, 100, []string{"a", "b", "c"}, []string{"a", "b", "c"}, 0},
		{"too many frames", 2, 100, []string{"a", "b", "c", "d"}, []string{"c", "d"}, 2},
		{"too many bytes", 10, 4, []string{"aa", "bb", "cc"}, []string{"bb", "cc"}, 1},
		{"one frame larger than the queue is kept alone", 10, 4, []string{"a", "b", "cccccc"}, []string{"cccccc"}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newOutbox(tc.maxItems, tc.maxBytes)
			dropped := 0
			for _, s := range tc.push {
				dropped += o.push(context.Background(), item(s), 0).dropped
			}
			got := payloads(o.peek(nil, 100, 1<<20))
			if fmt.Sprint(got) != fmt.Sprint(tc.wantQueue) || dropped != tc.dropped {
				t.Fatalf("queue %v after dropping %d, want %v after dropping %d", got, dropped, tc.wantQueue, tc.dropped)
			}
		})
	}
}

func TestOutboxPeekAckFlush(t *testing.T) {
	o := newOutbox(100, 1<<20)
	for i := range 5 {
		o.push(context.Background(), item(fmt.Sprint(i)), 0)
	}
	batch := o.peek(nil, 3, 1<<20)
	if got := payloads(batch); fmt.Sprint(got) != "[0 1 2]" {
		t.Fatalf("peek = %v", got)
	}
	flushed := make(chan error, 1)
	go func() { flushed <- o.flush(context.Background()) }()
	o.ack(batch[len(batch)-1].n)
	if got := payloads(o.peek(nil, 10, 1<<20)); fmt.Sprint(got) != "[3 4]" {
		t.Fatalf("after ack the queue is %v", got)
	}
	select {
	case <-flushed:
		t.Fatal("flush returned with frames still queued")
	default:
	}
	rest := o.peek(nil, 10, 1<<20)
	o.ack(rest[len(rest)-1].n)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if o.len() != 0 || o.bytes != 0 {
		t.Fatalf("len %d, bytes %d after acking everything", o.len(), o.bytes)
	}
}

func TestOutboxPeekRespectsBatchBytes(t *testing.T) {
	o := newOutbox(100, 1<<20)
	for _, s := range []string{"aaaa", "bbbb", "cccc"} {
		o.push(context.Background(), item(s), 0)
	}
	if got := payloads(o.peek(nil, 10, 9)); fmt.Sprint(got) != "[aaaa bbbb]" {
		t.Fatalf("peek with 9 bytes = %v", got)
	}
	if got := payloads(o.peek(nil, 10, 1)); fmt.Sprint(got) != "[aaaa]" {
		t.Fatalf("the first frame must always fit a batch, got %v", got)
	}
}

func TestOutboxPushWaitsForRoom(t *testing.T) {
	o := newOutbox(1, 1<<20)
	o.push(context.Background(), item("a"), 0)
	done := make(chan pushResult, 1)
	go func() { done <- o.push(context.Background(), item("b"), time.Minute) }()
	// The publisher writes "a": the waiting push gets room without dropping.
	for {
		batch := o.peek(nil, 1, 1<<20)
		if len(batch) == 1 && string(batch[0].payload) == "a" {
			o.ack(batch[0].n)
			break
		}
	}
	res := <-done
	if res.dropped != 0 || res.timedOut {
		t.Fatalf("push after room was made: %+v", res)
	}
	if got := payloads(o.peek(nil, 10, 1<<20)); fmt.Sprint(got) != "[b]" {
		t.Fatalf("queue = %v", got)
	}
}

func TestOutboxPushTimesOut(t *testing.T) {
	o := newOutbox(1, 1<<20)
	o.push(context.Background(), item("a"), 0)
	res := o.push(context.Background(), item("b"), time.Millisecond)
	if !res.timedOut || res.dropped != 1 {
		t.Fatalf("push into a full queue nobody drains: %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := o.push(ctx, item("c"), time.Hour); !res.timedOut || res.dropped != 1 {
		t.Fatalf("push with a cancelled context: %+v", res)
	}
}

func TestOutboxCompacts(t *testing.T) {
	o := newOutbox(100000, 1<<30)
	for i := range 5000 {
		o.push(context.Background(), item(fmt.Sprint(i)), 0)
	}
	for o.len() > 10 {
		batch := o.peek(nil, 7, 1<<20)
		o.ack(batch[len(batch)-1].n)
	}
	if o.head > 1024 {
		t.Fatalf("head %d: the dead prefix is never reclaimed", o.head)
	}
	batch := o.peek(nil, 100, 1<<20)
	if string(batch[len(batch)-1].payload) != "4999" {
		t.Fatalf("lost the tail: %v", payloads(batch))
	}
	o.ack(batch[len(batch)-1].n)
	if o.items != nil {
		t.Fatalf("an emptied queue keeps a %d-slot array", cap(o.items))
	}
}
