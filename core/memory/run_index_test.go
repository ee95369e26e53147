package memory

import (
	"maps"
	"testing"
)

// A runIndex holds what a map would, whatever the order of puts and
// deletes, including the first run's removal while others remain.
func TestRunIndexHoldsWhatAMapHolds(t *testing.T) {
	steps := []struct {
		put bool
		id  string
		v   int
	}{
		{true, "a", 1}, {true, "a", 2}, {true, "b", 3}, {true, "c", 4}, {false, "a", 0},
		{true, "a", 5}, {false, "x", 0}, {false, "b", 0}, {false, "c", 0}, {false, "a", 0},
		{true, "d", 6}, {false, "d", 0}, {true, "e", 7},
	}
	var x runIndex[int]
	want := map[string]int{}
	for i, st := range steps {
		if st.put {
			x.put(st.id, st.v)
			want[st.id] = st.v
		} else {
			x.del(st.id)
			delete(want, st.id)
		}
		got := maps.Collect(x.all)
		if !maps.Equal(got, want) || x.empty() != (len(want) == 0) {
			t.Fatalf("step %d (%+v): holds %v (empty %v), want %v", i, st, got, x.empty(), want)
		}
	}
}
