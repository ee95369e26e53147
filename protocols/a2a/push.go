package a2a

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/engine/webhook"
)

// maxPushConfigs bounds the push configurations one task keeps, so a
// client cannot grow a store without bound through one task.
const maxPushConfigs = 10

// pushConfigs keeps the push notification configurations of tasks: in the
// store (storedPushConfigs) when it has core.RunSubscriptionStore, so every
// replica sharing it sees a config set on any of them, across restarts;
// in this replica's memory (memPushConfigs) otherwise.
type pushConfigs interface {
	// save adds cfg to task (of context session), or replaces the config
	// of the same id; a config without id gets one. It returns what it
	// stored.
	save(ctx context.Context, task a2a.TaskID, session string, cfg a2a.PushConfig) (*a2a.PushConfig, error)
	// list is task's configs, in the order they were first set.
	list(ctx context.Context, task a2a.TaskID) ([]*a2a.PushConfig, error)
	// remove deletes task's config of id and reports whether it was there.
	remove(ctx context.Context, task a2a.TaskID, id string) (bool, error)
	// forget drops every config of task (its run ended and was delivered).
	forget(ctx context.Context, task a2a.TaskID) error
}

func tooManyPushConfigs(task a2a.TaskID) error {
	return fmt.Errorf("task %s has %d push notification configs already, the most it may have: %w", quote(string(task)), maxPushConfigs, a2a.ErrInvalidParams)
}

// memPushConfigs keeps configs in memory: lost when the process restarts
// and not shared across replicas. For a store without
// core.RunSubscriptionStore.
type memPushConfigs struct {
	mu   sync.Mutex
	next int
	cfgs map[a2a.TaskID][]*a2a.PushConfig
}

func newMemPushConfigs() *memPushConfigs {
	return &memPushConfigs{cfgs: map[a2a.TaskID][]*a2a.PushConfig{}}
}

func (s *memPushConfigs) save(_ context.Context, task a2a.TaskID, _ string, cfg a2a.PushConfig) (*a2a.PushConfig, error) {
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
		return nil, tooManyPushConfigs(task)
	}
	s.cfgs[task] = append(list, &cfg)
	out := cfg
	return &out, nil
}

func (s *memPushConfigs) list(_ context.Context, task a2a.TaskID) ([]*a2a.PushConfig, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*a2a.PushConfig, 0, len(s.cfgs[task]))
	for _, c := range s.cfgs[task] {
		cp := *c
		out = append(out, &cp)
	}
	return out, nil
}

func (s *memPushConfigs) remove(_ context.Context, task a2a.TaskID, id string) (bool, error) {
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
			return true, nil
		}
	}
	return false, nil
}

func (s *memPushConfigs) forget(_ context.Context, task a2a.TaskID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cfgs, task)
	return nil
}

// storedPushConfigs keeps configs as the store's run subscriptions
// (core.RunSubscriptionStore): one subscription per config, its document
// the config's v0.3 JSON, its id the mount's RPC path and the config's id
// (mount + " " + id), so each mount of a task (a v0.3 and a v1.0 one, say)
// lists and delivers its own configs, in its own shape. A config without
// id gets a random one, so two replicas never give one id twice.
type storedPushConfigs struct {
	st    *core.Storage
	mount string
}

func (s *storedPushConfigs) key(id string) string { return s.mount + " " + id }

func (s *storedPushConfigs) save(ctx context.Context, task a2a.TaskID, session string, cfg a2a.PushConfig) (*a2a.PushConfig, error) {
	all, err := s.list(ctx, task)
	if err != nil {
		return nil, err
	}
	if cfg.ID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		cfg.ID = "push-" + hex.EncodeToString(b[:])
	}
	if len(all) >= maxPushConfigs && !slices.ContainsFunc(all, func(c *a2a.PushConfig) bool { return c.ID == cfg.ID }) {
		// Two replicas setting a task's last configs at once may both
		// pass: the bound is on what one caller can grow, not exact.
		return nil, tooManyPushConfigs(task)
	}
	doc, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.st.PutRunSubscription(ctx, core.RunSubscription{RunID: string(task), ID: s.key(cfg.ID), SessionID: session, Config: doc}); err != nil {
		return nil, err
	}
	return &cfg, nil
}

func (s *storedPushConfigs) list(ctx context.Context, task a2a.TaskID) ([]*a2a.PushConfig, error) {
	subs, err := s.st.ListRunSubscriptions(ctx, string(task))
	if err != nil {
		return nil, err
	}
	out := []*a2a.PushConfig{}
	for _, sub := range subs {
		if _, ok := strings.CutPrefix(sub.ID, s.mount+" "); !ok {
			continue // another mount's
		}
		var c a2a.PushConfig
		if err := json.Unmarshal(sub.Config, &c); err != nil {
			return nil, fmt.Errorf("push notification config %q of task %s: %w", sub.ID, task, err)
		}
		out = append(out, &c)
	}
	return out, nil
}

func (s *storedPushConfigs) remove(ctx context.Context, task a2a.TaskID, id string) (bool, error) {
	return s.st.DeleteRunSubscription(ctx, string(task), s.key(id))
}

func (s *storedPushConfigs) forget(ctx context.Context, task a2a.TaskID) error {
	all, err := s.list(ctx, task)
	if err != nil {
		return err
	}
	for _, c := range all {
		if _, err := s.st.DeleteRunSubscription(ctx, string(task), s.key(c.ID)); err != nil {
			return err
		}
	}
	return nil
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
	store pushConfigs
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

func newPusher(send *webhook.Sender, store pushConfigs, encode func(*a2a.Task) ([]byte, error), log *slog.Logger) *pusher {
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
		cfgs, err := p.store.list(p.ctx, task)
		if err != nil {
			p.log.Error("a2a: reading a task's push notification configs failed", "task", string(task), "error", err)
		}
		for _, cfg := range cfgs {
			n, err := p.send.Send(p.ctx, webhook.Delivery{URL: cfg.URL, Body: body, Header: pushHeader(cfg)})
			if err != nil {
				p.log.Warn("a2a: a push notification was not delivered", "task", string(task), "config", cfg.ID, "attempts", n, "error", err)
			}
		}
		if t.Status.State.Terminal() {
			// The task will not change again: its configs and count go,
			// so finished tasks hold no memory.
			if err := p.store.forget(p.ctx, task); err != nil {
				p.log.Warn("a2a: a finished task's push notification configs were not deleted", "task", string(task), "error", err)
			}
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
	if ps == nil {
		return
	}
	if cfgs, err := ps.store.list(ps.ctx, task.TaskID); err != nil || len(cfgs) == 0 {
		if err != nil {
			p.log.Error("a2a: reading a task's push notification configs failed", "task", string(task.TaskID), "error", err)
		}
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
		p.follow(ps.ctx, string(task.TaskID), history, p.newMapper(task), func(ev a2a.Event, seq int64) bool {
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
			if seq < history {
				// Before the answer that resumed the run: the replica
				// that ran that stretch delivered it (this one, or
				// another sharing the configs), so it is counted, not
				// sent again.
				fresh = false
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
