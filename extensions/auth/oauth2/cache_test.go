package oauth2

import (
	"crypto/sha256"
	"strconv"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

func TestCacheIsBoundedLRU(t *testing.T) {
	c := newCache(3)
	now := time.Unix(1000, 0)
	key := func(i int) [32]byte { return sha256.Sum256([]byte(strconv.Itoa(i))) }
	for i := range 3 {
		c.put(key(i), entry{id: &core.AuthIdentity{Subject: strconv.Itoa(i)}, until: now.Add(time.Minute)})
	}
	if _, ok := c.get(key(0), now); !ok { // 0 becomes the most recent
		t.Fatal("0 missing")
	}
	c.put(key(3), entry{until: now.Add(time.Minute)}) // evicts 1, the least recent
	if _, ok := c.get(key(1), now); ok {
		t.Error("1 was not evicted")
	}
	for _, i := range []int{0, 2, 3} {
		if _, ok := c.get(key(i), now); !ok {
			t.Errorf("%d evicted", i)
		}
	}
	if c.Len() != 3 {
		t.Errorf("len %d", c.Len())
	}
	if _, ok := c.get(key(0), now.Add(time.Minute)); ok {
		t.Error("an expired entry was served")
	}
	if c.Len() != 2 {
		t.Errorf("the expired entry was kept: len %d", c.Len())
	}
}
