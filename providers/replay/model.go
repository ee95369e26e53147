package replay

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/breadai/bread/core"
)

// Mode says how a model picks the call to play.
type Mode string

const (
	// Sequence plays calls in the order Stream is called, counted per
	// process.
	Sequence Mode = "sequence"
	// Conversation plays the call whose number is the count of assistant
	// messages in the request: the first call of a conversation plays
	// call 0, the call after a tool result call 1, and so on. The choice
	// depends only on the conversation, so replicas, concurrent runs and a
	// resume on another process all replay the same call. It is the
	// default: a run resumed after a restart replays the right turn.
	Conversation Mode = "conversation"
)

// Options configure replay models.
type Options struct {
	// Mode picks calls by conversation (the default) or by sequence.
	Mode Mode
	// Once makes a model fail (REPLAY_EXHAUSTED) after its last call instead
	// of starting over.
	Once bool
	// NoDelay ignores the transcript's delays.
	NoDelay bool
}

// CodeExhausted is the error code of a call past the end of a transcript
// played Once.
const CodeExhausted = "REPLAY_EXHAUSTED"

// Model is a core.LanguageModel playing a transcript. It is safe for
// concurrent use; calls take the transcript's calls in order.
type Model struct {
	t    *Transcript
	opts Options
	mu   sync.Mutex
	next int
}

// NewModel plays t.
func NewModel(t *Transcript, opts Options) *Model { return &Model{t: t, opts: opts} }

// Open parses the transcript file at path.
func Open(path string, opts Options) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "replay transcript " + path + " cannot be opened: " + err.Error(), Cause: err}
	}
	defer f.Close()
	t, err := Parse(f)
	if err != nil {
		be := core.AsBreadError(err, core.CodeInvalidConfig)
		return nil, be.WithContext("path", path)
	}
	return NewModel(t, opts), nil
}

// Stream implements core.LanguageModel.
func (m *Model) Stream(ctx context.Context, req core.ModelRequest) iter.Seq2[core.ModelEvent, error] {
	var call int
	if m.opts.Mode != Sequence {
		for _, msg := range req.Messages {
			if msg.Role == core.RoleAssistant {
				call++
			}
		}
	} else {
		m.mu.Lock()
		call = m.next
		m.next++
		m.mu.Unlock()
	}
	return func(yield func(core.ModelEvent, error) bool) {
		if call >= m.t.Calls() {
			if m.opts.Once {
				yield(core.ModelEvent{}, &core.BreadError{Code: CodeExhausted, Message: "the replay transcript has no more model calls"})
				return
			}
			call %= m.t.Calls()
		}
		for _, s := range m.t.calls[call] {
			if s.delayMs > 0 && !m.opts.NoDelay {
				t := time.NewTimer(time.Duration(s.delayMs) * time.Millisecond)
				select {
				case <-ctx.Done():
					t.Stop()
					yield(core.ModelEvent{}, ctx.Err())
					return
				case <-t.C:
				}
			}
			if err := ctx.Err(); err != nil {
				yield(core.ModelEvent{}, err)
				return
			}
			if s.err != nil {
				yield(core.ModelEvent{}, s.err)
				return
			}
			if !yield(s.event, nil) {
				return
			}
		}
	}
}

// Registry returns a provider registry named "replay" whose model ids are
// transcript paths, relative to dir unless absolute. Each transcript is
// opened once and shared, so its calls advance across runs.
func Registry(dir string, opts Options) core.ProviderRegistry {
	var mu sync.Mutex
	models := map[string]*Model{}
	return core.ProviderRegistry{"replay": func(modelID string) (core.LanguageModel, error) {
		// "transcript.jsonl#sequence" picks the mode for that one model: a
		// map step replays its items' calls in order while the rest of the
		// project replays by conversation.
		opts := opts
		if id, mode, ok := strings.Cut(modelID, "#"); ok {
			switch Mode(mode) {
			case Sequence, Conversation:
				modelID, opts.Mode = id, Mode(mode)
			default:
				return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "replay model id " + modelID + ": mode " + mode + " is not sequence or conversation"}
			}
		}
		path := modelID
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		path = filepath.Clean(path)
		if !filepath.IsAbs(modelID) && strings.HasPrefix(path, "..") {
			return nil, &core.BreadError{Code: core.CodeInvalidConfig, Message: "replay model id " + modelID + " leaves the project"}
		}
		mu.Lock()
		defer mu.Unlock()
		key := path + "#" + string(opts.Mode)
		if m, ok := models[key]; ok {
			return m, nil
		}
		m, err := Open(path, opts)
		if err != nil {
			return nil, err
		}
		models[key] = m
		return m, nil
	}}
}
