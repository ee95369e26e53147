package core

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestUUIDv7sAreUUIDv7s(t *testing.T) {
	var g UUIDv7s
	before := time.Now().UnixMilli()
	for range 3 * uuidRandomBlock / 8 { // across refills of the random block
		s := g.New()
		u, err := uuid.Parse(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("%q: version %d, variant %v; want 7, RFC4122", s, u.Version(), u.Variant())
		}
		if s != u.String() || s != strings.ToLower(s) {
			t.Fatalf("%q is not the canonical form %q", s, u.String())
		}
		sec, nsec := u.Time().UnixTime()
		if ms := sec*1000 + nsec/1e6; ms < before || ms > time.Now().UnixMilli() {
			t.Fatalf("%q: time %d ms, not within the test's %d..now", s, ms, before)
		}
	}
}

func TestUUIDv7sSortInTheOrderMinted(t *testing.T) {
	tests := []struct {
		name  string
		nanos []int64 // clock readings, one an id
	}{
		{"the same reading", []int64{5e9, 5e9, 5e9, 5e9}},
		{"a clock that steps back", []int64{9e9, 8e9, 7e9}},
		{"the same millisecond", []int64{3e9 + 100, 3e9 + 200, 3e9 + 999_999}},
		{"a sequence that carries into the next millisecond", []int64{4e9 + 999_999, 4e9 + 999_999, 4e9 + 999_999, 4e9 + 1_000_000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var g UUIDv7s
			prev := ""
			for _, n := range tc.nanos {
				s := g.newAt(n)
				if s <= prev {
					t.Fatalf("%q minted after %q sorts before it", s, prev)
				}
				prev = s
			}
		})
	}
}

func TestUUIDv7sAreUniqueAcrossGoroutines(t *testing.T) {
	var g UUIDv7s
	const workers, each = 8, 2000
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				ids[w] = append(ids[w], g.New())
			}
		})
	}
	wg.Wait()
	seen := make(map[string]bool, workers*each)
	for _, list := range ids {
		for i, s := range list {
			if seen[s] {
				t.Fatalf("%q minted twice", s)
			}
			seen[s] = true
			if i > 0 && s <= list[i-1] {
				t.Fatalf("%q minted after %q on one goroutine sorts before it", s, list[i-1])
			}
		}
	}
}

func BenchmarkUUIDv7(b *testing.B) {
	b.Run("google", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = uuid.Must(uuid.NewV7()).String()
		}
	})
	b.Run("UUIDv7s", func(b *testing.B) {
		var g UUIDv7s
		b.ReportAllocs()
		for b.Loop() {
			_ = g.New()
		}
	})
}
