package core

import (
	"crypto/rand"
	"sync"
	"time"
)

// UUIDv7s mints UUIDv7 ids (RFC 9562) in their text form, as
// uuid.Must(uuid.NewV7()).String() of google/uuid does, and with the same
// layout: 48 bits of Unix milliseconds, 12 bits of the millisecond's
// fraction that also count up when two ids share a clock reading (so the
// ids of one UUIDv7s sort in the order they were minted), and 62 random
// bits. It costs one allocation (the string) an id, where google/uuid's
// costs two and a read of the system's random source per id: the random
// bits come from crypto/rand in blocks. The zero value is ready; it is
// safe for concurrent use.
type UUIDv7s struct {
	mu   sync.Mutex
	last int64 // the last id's milliseconds << 12 | its 12-bit sequence
	rnd  [uuidRandomBlock]byte
	left int // the last left bytes of rnd are unused
}

// uuidRandomBlock is how many random bytes one read of crypto/rand
// fetches: eight an id.
const uuidRandomBlock = 512

// uuids is the process's one generator, behind NewUUIDv7: ids minted in one
// process sort in the order they were minted whichever engine instance or
// store minted them, as google/uuid's process-wide state made them. Two
// replicas in one process (tests, a dev server) rely on it: the busy gate
// breaks a tie between runs updated in the same millisecond by their ids.
var uuids UUIDv7s

// NewUUIDv7 returns a new UUIDv7 in its canonical text form from the
// process's generator: unique, and sortable by when it was minted.
func NewUUIDv7() string { return uuids.New() }

// New returns a new UUIDv7 in its canonical text form.
func (g *UUIDv7s) New() string {
	return g.newAt(time.Now().UnixNano())
}

// newAt is New with the clock read at nano (Unix nanoseconds).
func (g *UUIDv7s) newAt(nano int64) string {
	var u [16]byte
	milli := nano / 1e6
	// The fraction of the millisecond in 12 bits, as google/uuid takes it.
	now := milli<<12 + (nano-milli*1e6)>>8
	g.mu.Lock()
	if now <= g.last {
		now = g.last + 1
	}
	g.last = now
	if g.left < 8 {
		// crypto/rand.Read never fails (it crashes the program instead).
		_, _ = rand.Read(g.rnd[:])
		g.left = len(g.rnd)
	}
	used := g.rnd[len(g.rnd)-g.left:][:8]
	copy(u[8:], used)
	clear(used) // random bits handed out are not kept
	g.left -= 8
	g.mu.Unlock()
	milli, seq := now>>12, now&0xfff
	u[0] = byte(milli >> 40)
	u[1] = byte(milli >> 32)
	u[2] = byte(milli >> 24)
	u[3] = byte(milli >> 16)
	u[4] = byte(milli >> 8)
	u[5] = byte(milli)
	u[6] = 0x70 | byte(seq>>8)&0x0f // version 7
	u[7] = byte(seq)
	u[8] = u[8]&0x3f | 0x80 // the RFC 4122 variant
	return uuidText(&u)
}

// uuidText is u in the canonical 8-4-4-4-12 lower-case hex form.
func uuidText(u *[16]byte) string {
	const hexDigits = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hexDigits[c>>4], hexDigits[c&0x0f]
		j += 2
	}
	return string(b[:])
}
