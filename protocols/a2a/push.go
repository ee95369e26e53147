package a2a

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/engine/webhook"
)

// maxPushConfigs bounds the push configurations one task keeps, so a
// client cannot grow a replica's memory without bound through one task.
const maxPushConfigs = 10

// pushStore keeps the push notification configurations of tasks in memory:
// they are lost when the process restarts and not shared across replicas
// (core.Storage has no generic key-value capability to keep them in).
type pushStore struct {
	mu   sync.Mutex
	next int
	cfgs map[a2a.TaskID][]*a2a.PushConfig
}

func newPushStore() *pushStore { return &pushStore{cfgs: map[a2a.TaskID][]*a2a.PushConfig{}} }

// save adds cfg to task, or replaces the config of the same id; a config
// without id gets one. It stores and returns a copy.
func (s *pushStore) save(task a2a.TaskID, cfg a2a.PushConfig) (*a2a.PushConfig, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cfg.ID == "" {
		s.next++
		cfg.ID = "push-" + strconv.Itoa(s.next)
	}
	list := s.cfgs[task]
	for i, c := range list {
		if c.ID == cfg.ID {
			list[i] = &cfg
			out := cfg
			return &out, nil
		}
	}
	if len(list) >= maxPushConfigs {
		return nil, fmt.Errorf("task %s has %d push notification configs already, the most it may have: %w", quote(string(task)), maxPushConfigs, a2a.ErrInvalidParams)
	}
	s.cfgs[task] = append(list, &cfg)
	out := cfg
	return &out, nil
}

// get is task's config of id, nil when there is none.
func (s *pushStore) get(task a2a.TaskID, id string) *a2a.PushConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.cfgs[task] {
		if c.ID == id {
			out := *c
			return &out
		}
	}
	return nil
}

// list is a copy of task's configs, in the order they were set.
func (s *pushStore) list(task a2a.TaskID) []*a2a.PushConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*a2a.PushConfig, 0, len(s.cfgs[task]))
	for _, c := range s.cfgs[task] {
		cp := *c
		out = append(out, &cp)
	}
	return out
}

// remove deletes task's config of id and reports whether it was there.
func (s *pushStore) remove(task a2a.TaskID, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.cfgs[task]
	for i, c := range list {
		if c.ID == id {
			list = append(list[:i:i], list[i+1:]...)
			if len(list) == 0 {
				delete(s.cfgs, task)
			} else {
				s.cfgs[task] = list
			}
			return true
		}
	}
	return false
}

// forget drops every config of task (its run ended and was delivered).
func (s *pushStore) forget(task a2a.TaskID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cfgs, task)
}

// pushHeader is the header a delivery to cfg carries: the config's token as
// X-A2A-Notification-Token (the receiver checks it is its own), and the
// credentials of its authentication as Authorization for the first scheme
// bread can use (Bearer or Basic; credentials sent as given).
func pushHeader(cfg *a2a.PushConfig) http.Header {
	h := http.Header{}
	if cfg.Token != "" {
		h.Set("X-A2A-Notification-Token", cfg.Token)
	}
	if cfg.Auth != nil && cfg.Auth.Credentials != "" {
		for _, s := range cfg.Auth.Schemes {
			if strings.EqualFold(s, "bearer") || strings.EqualFold(s, "basic") {
				h.Set("Authorization", canonicalScheme(s)+" "+cfg.Auth.Credentials)
				break
			}
		}
	}
	return h
}

func canonicalScheme(s string) string {
	if strings.EqualFold(s, "bearer") {
		return "Bearer"
	}
	return "Basic"
}

// pushAuthSupported reports whether bread can authenticate to cfg's
// receiver: no authentication asked, or one of its schemes is Bearer or
// Basic with credentials.
func pushAuthSupported(cfg *a2a.PushConfig) bool {
	return cfg.Auth == nil || len(cfg.Auth.Schemes) == 0 || pushHeader(cfg).Get("Authorization") != ""
}

// pusher delivers task snapshots to the configured receivers through a
// webhook.Sender: one goroutine per task with work queued, so the
// deliveries of a task arrive in the order they were queued and a slow
// receiver never blocks the run (enqueue only appends to a queue).
type pusher struct {
	send  *webhook.Sender
	store *pushStore
	// encode is a snapshot as the mount's spec version delivers it: the
	// Task (v0.3), or a StreamResponse holding it (v1.0).
	encode func(*a2a.Task) ([]byte, error)
	log    *slog.Logger
	ctx    context.Context // ended by close: abandons retries
	stop   context.CancelFunc

	mu       sync.Mutex
	queues   map[a2a.TaskID][]*a2a.Task
	watching map[a2a.TaskID]bool // a watch goroutine follows the task
	again    map[a2a.TaskID]bool // follow the task again when its watcher ends
	sent     map[a2a.TaskID]int  // status events of the task queued so far
	last     map[a2a.TaskID]a2a.TaskState
	history  map[a2a.TaskID]int64 // where the task's latest continuation starts in its log
	wg       sync.WaitGroup
	closed   bool
}

func newPusher(send *webhook.Sender, store *pushStore, encode func(*a2a.Task) ([]byte, error), log *slog.Logger) *pusher {
	ctx, stop := context.WithCancel(context.Background())
	return &pusher{send: send, store: store, encode: encode, log: log, ctx: ctx, stop: stop, queues: map[a2a.TaskID][]*a2a.Task{},
		watching: map[a2a.TaskID]bool{}, again: map[a2a.TaskID]bool{}, sent: map[a2a.TaskID]int{}, last: map[a2a.TaskID]a2a.TaskState{}, history: map[a2a.TaskID]int64{}}
}

// enqueue queues t (a snapshot the caller no longer changes) for every
// receiver of its task; a task's first queued snapshot starts its worker.
func (p *pusher) enqueue(t *a2a.Task) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	if t.Status.State == a2a.TaskStateWorking && p.last[t.ID] == a2a.TaskStateWorking {
		// Working again, as a resumed run's log says after the answer
		// queued it: one change, one notification.
		return
	}
	p.last[t.ID] = t.Status.State
	q, busy := p.queues[t.ID]
	p.queues[t.ID] = append(q, t)
	if busy {
		return
	}
	p.wg.Add(1)
	go p.drain(t.ID)
}

// drain delivers task's queued snapshots one after the other, each to every
// config the task has when its turn comes, and ends when the queue is empty.
func (p *pusher) drain(task a2a.TaskID) {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		q := p.queues[task]
		if len(q) == 0 || p.closed {
			delete(p.queues, task)
			p.mu.Unlock()
			return
		}
		t := q[0]
		p.queues[task] = q[1:]
		p.mu.Unlock()
		body, err := p.encode(t)
		if err != nil {
			p.log.Error("a2a: encoding a push notification failed", "task", string(task), "error", err)
			continue
		}
		for _, cfg := range p.store.list(task) {
			n, err := p.send.Send(p.ctx, webhook.Delivery{URL: cfg.URL, Body: body, Header: pushHeader(cfg)})
			if err != nil {
				p.log.Warn("a2a: a push notification was not delivered", "task", string(task), "config", cfg.ID, "attempts", n, "error", err)
			}
		}
		if t.Status.State.Terminal() {
			// The task will not change again: its configs and count go,
			// so finished tasks hold no memory.
			p.store.forget(task)
			p.mu.Lock()
			delete(p.sent, task)
			delete(p.last, task)
			delete(p.history, task)
			p.mu.Unlock()
		}
	}
}

// resumedAt records that task's run was resumed at log position seq.
func (p *pusher) resumedAt(task a2a.TaskID, seq int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.history[task] = max(p.history[task], seq)
}

// close abandons the deliveries waiting to retry, drops the queued ones and
// waits for the workers to end.
func (p *pusher) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.stop()
	p.wg.Wait()
}

// watch follows task's run (when it has push configs and nobody follows it
// yet) and queues a snapshot of the task at each state change, until the
// run reaches a state it stops on. A run resumed later is watched again:
// the events a former watcher already saw (the replayed log) are skipped by
// count, so each state change goes out once.
func (p *Plugin) watch(task a2a.TaskInfo) {
	ps := p.push
	if ps == nil || len(ps.store.list(task.TaskID)) == 0 {
		return
	}
	ps.mu.Lock()
	if ps.closed {
		ps.mu.Unlock()
		return
	}
	if ps.watching[task.TaskID] {
		// A watcher still follows the run's former stretch (an answer
		// came before it saw the input request): it follows again when
		// it ends, skipping what it delivered.
		ps.again[task.TaskID] = true
		ps.mu.Unlock()
		return
	}
	ps.watching[task.TaskID] = true
	ps.wg.Add(1)
	ps.mu.Unlock()
	go func() {
		defer ps.wg.Done()
		for p.watchOnce(task) {
		}
	}()
}

// watchOnce follows task's run once and reports whether to follow again.
func (p *Plugin) watchOnce(task a2a.TaskInfo) (again bool) {
	ps := p.push
	defer func() {
		ps.mu.Lock()
		again = ps.again[task.TaskID] && !ps.closed
		delete(ps.again, task.TaskID)
		if !again {
			delete(ps.watching, task.TaskID)
		}
		ps.mu.Unlock()
	}()
	{
		t := &a2a.Task{ID: task.TaskID, ContextID: task.ContextID}
		seen := 0
		ps.mu.Lock()
		history := ps.history[task.TaskID]
		ps.mu.Unlock()
		p.follow(ps.ctx, string(task.TaskID), history, p.newMapper(task), func(ev a2a.Event) bool {
			st, ok := ev.(*a2a.TaskStatusUpdateEvent)
			if !ok {
				apply(t, ev)
				return true
			}
			apply(t, ev)
			seen++
			ps.mu.Lock()
			fresh := seen > ps.sent[task.TaskID]
			if fresh {
				ps.sent[task.TaskID] = seen
			}
			ps.mu.Unlock()
			if fresh {
				// A deep copy: the delivery encodes it on another
				// goroutine while this one folds the next events into t.
				snap := cloneTask(t)
				snap.Status = st.Status
				ps.enqueue(snap)
			}
			return true
		})
	}
	return false
}
