package stream_test

import (
	"errors"
	"slices"
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

// Watch is Subscribe waited on as a channel: the replay of buffered frames
// after afterSeq first, then live frames, a slow watcher ended with
// ErrSlowSubscriber, and Close detaching it.
func TestWatch(t *testing.T) {
	ctx := t.Context()
	tr := stream.New(stream.Options{MaxSubscriberLag: 3})
	frame := func(seq int64) core.Frame {
		return core.Frame{RunID: "r", Seq: seq, Crumb: &core.TextDelta{CrumbBase: core.CrumbBase{RunID: "r", Seq: seq}, Delta: "x"}}
	}
	for seq := int64(1); seq <= 2; seq++ {
		_ = tr.Publish(ctx, frame(seq))
	}
	var w core.Watch = tr.Watch("r", 1)
	seqs := func(fs []core.Frame) (out []int64) {
		for _, f := range fs {
			out = append(out, f.Seq)
		}
		return out
	}
	select {
	case <-w.Ready():
	default:
		t.Fatal("a watch with a replay to take is not ready")
	}
	got, err := w.Take(nil)
	if err != nil || !slices.Equal(seqs(got), []int64{2}) {
		t.Fatalf("replay after seq 1: %v, %v", seqs(got), err)
	}
	_ = tr.Publish(ctx, frame(3))
	<-w.Ready()
	if got, err = w.Take(got[:0]); err != nil || !slices.Equal(seqs(got), []int64{3}) {
		t.Fatalf("live: %v, %v", seqs(got), err)
	}
	for seq := int64(4); seq <= 8; seq++ {
		_ = tr.Publish(ctx, frame(seq))
	}
	if _, err = w.Take(nil); !errors.Is(err, stream.ErrSlowSubscriber) {
		t.Fatalf("a watcher 5 frames behind with a lag of 3: %v", err)
	}
	w.Close()
	_ = tr.Publish(ctx, frame(9))
	if got, _ := w.Take(nil); len(got) != 0 {
		t.Errorf("a closed watch still queues frames: %v", seqs(got))
	}
}
