package stream_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/stream"
	"github.com/breadai/bread/core/transporttest"
)

func TestConformance(t *testing.T) {
	transporttest.Run(t, transporttest.Features{Replay: true, Durable: true}, func(t *testing.T) core.BreadBus {
		// A small buffer, so the durable floor case publishes far past it.
		return stream.New(stream.Options{MaxSubscriberLag: 50000, MaxBytesPerRun: 8 << 10})
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

// A run's buffer: below the durable floor it keeps what its bounds allow,
// at or above it everything, up to the pending bound.
func TestBufferBounds(t *testing.T) {
	const size = stream.FrameOverhead + 100 // one delta below
	delta := func(seq, floor int64, i int) core.Frame {
		return core.Frame{RunID: "r", Seq: seq, Durable: floor, Crumb: &core.TextDelta{
			CrumbBase: core.CrumbBase{RunID: "r", Seq: seq}, Delta: fmt.Sprintf("%100d", i)}}
	}
	kept := func(tr *stream.Transport) (out []int) {
		w := tr.Watch("r", -1)
		defer w.Close()
		fs, _ := w.Take(nil)
		for _, f := range fs {
			var n int
			_, _ = fmt.Sscan(f.Crumb.(*core.TextDelta).Delta, &n)
			out = append(out, n)
		}
		return out
	}
	span := func(from, to int) (out []int) {
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		opts  stream.Options
		floor func(i int) (seq, floor int64)
		want  []int
	}{
		{"no floor: the byte bound", stream.Options{MaxBytesPerRun: 10 * size},
			func(int) (int64, int64) { return 1, 0 }, span(90, 99)},
		{"no floor: the frame bound", stream.Options{MaxFramesPerRun: 5},
			func(int) (int64, int64) { return 1, 0 }, span(95, 99)},
		{"at the floor: everything", stream.Options{MaxBytesPerRun: 10 * size},
			func(int) (int64, int64) { return 1, 1 }, span(0, 99)},
		{"at the floor: the pending bound", stream.Options{MaxBytesPerRun: 10 * size, MaxPendingBytesPerRun: 20 * size},
			func(int) (int64, int64) { return 1, 1 }, span(80, 99)},
		// Windows of ten deltas, each at seq 2k+1 (its log entry takes 2k+2),
		// with the floor one window behind: the window at the floor and the
		// open one stay whatever the bound, older ones go.
		{"a moving floor", stream.Options{MaxBytesPerRun: 5 * size},
			func(i int) (int64, int64) { w := int64(i / 10); return 2*w + 1, max(2*w-1, 1) }, span(80, 99)},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := stream.New(c.opts)
			for i := range 100 {
				seq, floor := c.floor(i)
				_ = tr.Publish(t.Context(), delta(seq, floor, i))
			}
			if got := kept(tr); !slices.Equal(got, c.want) {
				t.Fatalf("kept %v\nwant %v", got, c.want)
			}
		})
	}
}
