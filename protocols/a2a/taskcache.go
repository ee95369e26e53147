package a2a

import (
	"container/list"
	"context"
	"maps"
	"sync"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/breadai/bread/core"
)

// taskCacheSize bounds the tasks a plugin keeps built; a task that falls
// out is rebuilt from its log on its next read.
const taskCacheSize = 512

// taskCache keeps, per task, the task its crumb log built so far, the
// mapper that built it and the log position it read up to, so a read of
// the task (tasks/get, ListTasks with artifacts, an answer's task so far)
// reads only the entries logged since: one GetCrumbs call that returns
// nothing for a task that has not moved, instead of the whole log on each
// call. A run's entries are appended in seq order by one writer, so what
// was read stays a prefix of the log. It lives in the replica's memory, at
// most taskCacheSize tasks, least recently read first out; another replica
// builds its own on its first read.
type taskCache struct {
	mu    sync.Mutex
	byID  map[string]*list.Element // of *taskEntry
	order *list.List               // most recently read first
}

// taskEntry is one task as its log built it. mu is held while the entry
// reads more of the log, so two reads of one task never read it twice.
type taskEntry struct {
	id    string
	mu    sync.Mutex
	task  *a2a.Task
	m     *mapper
	after int64 // the highest seq applied
}

func newTaskCache() *taskCache {
	return &taskCache{byID: map[string]*list.Element{}, order: list.New()}
}

// entry is id's entry, made when missing, marked most recently used; the
// least recently used one goes when the cache is full.
func (c *taskCache) entry(id string) *taskEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byID[id]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*taskEntry)
	}
	e := &taskEntry{id: id}
	c.byID[id] = c.order.PushFront(e)
	if c.order.Len() > taskCacheSize {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byID, last.Value.(*taskEntry).id)
	}
	return e
}

// replayed is the task rec's crumb log builds and the mapper that built it
// (copies the caller may change), reading only what the cache has not
// read yet. Without a cache (nil) it reads the whole log.
func (c *taskCache) replayed(ctx context.Context, h *handler, rec core.RunRecord) (*a2a.Task, *mapper) {
	info := taskInfo(rec.ID, rec.SessionID)
	if c == nil {
		t, m := &a2a.Task{ID: info.TaskID, ContextID: info.ContextID}, h.p.newMapper(info)
		h.readLog(ctx, rec, 0, t, m)
		return t, m
	}
	e := c.entry(rec.ID)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.task == nil {
		e.task, e.m = &a2a.Task{ID: info.TaskID, ContextID: info.ContextID}, h.p.newMapper(info)
	}
	e.after = h.readLog(ctx, rec, e.after, e.task, e.m)
	return cloneTask(e.task), e.m.clone()
}

// cloneTask copies t deeply enough that applying events to either leaves
// the other as it was: the artifacts and their part lists are copied (a
// part's own values are never changed in place).
func cloneTask(t *a2a.Task) *a2a.Task {
	out := *t
	out.Artifacts = nil
	for _, a := range t.Artifacts {
		cp := *a
		cp.Parts = append(a2a.ContentParts(nil), a.Parts...)
		out.Artifacts = append(out.Artifacts, &cp)
	}
	out.History = append([]*a2a.Message(nil), t.History...)
	return &out
}

// clone copies m so that mapping more crumbs with either leaves the other
// as it was.
func (m *mapper) clone() *mapper {
	out := *m
	out.sent = maps.Clone(m.sent)
	return &out
}
