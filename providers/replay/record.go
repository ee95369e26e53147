package replay

import (
	"context"
	"io"
	"iter"
	"sync"

	"github.com/breadai/bread/core"
)

// Recorder writes model calls as a transcript that Model replays. Calls are
// numbered in the order they start; a call's lines are written together when
// it ends, so concurrent calls never interleave.
type Recorder struct {
	mu   sync.Mutex
	w    io.Writer
	next int
	err  error
}

// NewRecorder records to w.
func NewRecorder(w io.Writer) *Recorder { return &Recorder{w: w} }

// Err returns the first write error, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Wrap returns a model that records every call of m.
func (r *Recorder) Wrap(m core.LanguageModel) core.LanguageModel { return recorded{r: r, m: m} }

// WrapRegistry records every model of reg.
func (r *Recorder) WrapRegistry(reg core.ProviderRegistry) core.ProviderRegistry {
	out := make(core.ProviderRegistry, len(reg))
	for name, f := range reg {
		out[name] = func(id string) (core.LanguageModel, error) {
			m, err := f(id)
			if err != nil {
				return nil, err
			}
			return r.Wrap(m), nil
		}
	}
	return out
}

type recorded struct {
	r *Recorder
	m core.LanguageModel
}

func (rm recorded) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	return func(yield func(core.ModelEvent, error) bool) {
		rm.r.mu.Lock()
		call := rm.r.next
		rm.r.next++
		rm.r.mu.Unlock()
		var buf []byte
		defer func() { rm.r.write(buf) }()
		for ev, err := range rm.m.Stream(ctx, req) {
			if line, e := encode(call, ev, err); e == nil {
				buf = append(buf, line...)
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

func (r *Recorder) write(b []byte) {
	if len(b) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	_, r.err = r.w.Write(b)
}
