package memory

// runIndex is one session's runs in an index by session (Store's
// sessionRecords and sessionRuns), held by value in the index's map: the
// first run in place, any more in a map. Most sessions have one run, and a
// map per session cost each of them a map's allocations, a few hundred
// bytes of pointers the collector marks on every cycle (the store keeps
// ten thousand sessions by default), and a cold delete when the run is
// dropped. A zero runIndex is empty; more is empty while id is "".
type runIndex[V any] struct {
	id   string // the first run, "" when there is none
	v    V
	more map[string]V
}

// put adds or replaces run id.
func (x *runIndex[V]) put(id string, v V) {
	if x.id == "" || x.id == id {
		x.id, x.v = id, v
		return
	}
	if x.more == nil {
		x.more = make(map[string]V)
	}
	x.more[id] = v
}

// del removes run id, if it is there.
func (x *runIndex[V]) del(id string) {
	if id != x.id {
		delete(x.more, id)
		return
	}
	var zero V
	x.id, x.v = "", zero
	for k, v := range x.more { // keep one in place
		x.id, x.v = k, v
		delete(x.more, k)
		break
	}
}

// empty reports whether the index holds no run.
func (x runIndex[V]) empty() bool { return x.id == "" }

// all yields every run of the index, in no order.
func (x runIndex[V]) all(yield func(string, V) bool) {
	if x.id == "" || !yield(x.id, x.v) {
		return
	}
	for k, v := range x.more {
		if !yield(k, v) {
			return
		}
	}
}
