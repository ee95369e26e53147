package hub

import (
	"fmt"
	"slices"
	"testing"
)

type item struct {
	key string
	seq int64
}

// A key past MaxKeys evicts the least recently published key's buffer,
// whose ring the new key reuses: the new key replays its own items only,
// the evicted key none, and the others theirs.
func TestEvictedBufferServesTheNextKeyEmpty(t *testing.T) {
	for _, perKey := range []int{1, 3, 70} { // 70: past maxReusedItems, a fresh array
		t.Run(fmt.Sprint(perKey), func(t *testing.T) {
			h := New(Options{MaxKeys: 2}, func(v item) int64 { return v.seq }, func(item) int { return 1 })
			publish := func(key string) {
				for i := range perKey {
					h.Publish(key, item{key, int64(i + 1)}, 0)
				}
			}
			publish("a")
			publish("b")
			publish("a") // b is now the least recently published
			publish("c")
			for key, want := range map[string]int{"a": 2 * perKey, "b": 0, "c": perKey} {
				got := replay(h, key)
				if len(got) != want || slices.ContainsFunc(got, func(v item) bool { return v.key != key }) {
					t.Errorf("key %s replays %v, want %d items of its own", key, got, want)
				}
			}
		})
	}
}

func replay(h *Hub[item], key string) []item {
	s := h.register(key, 0)
	defer h.unsubscribe(key, s)
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(s.queue)
}
