package bench_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// pgCounter is a TCP proxy in front of PostgreSQL that counts the round
// trips its clients make: a simple-protocol Query message ('Q') or an
// extended-protocol Sync ('S') is one wait for the server's ReadyForQuery.
// It also tallies the statements by their first words, so a test can say
// which statements a run sends.
type pgCounter struct {
	ln net.Listener
	wg sync.WaitGroup

	mu     sync.Mutex
	trips  int
	byText map[string]int
	conns  []net.Conn
}

// countPostgres starts a counting proxy to the server of base (a postgres://
// URL) and returns base pointed at the proxy.
func countPostgres(tb testing.TB, base string) (*pgCounter, string) {
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	c := &pgCounter{ln: ln, byText: map[string]int{}}
	upstream := u.Host
	c.wg.Go(func() {
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", upstream)
			if err != nil {
				_ = down.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, down, up)
			c.mu.Unlock()
			c.wg.Go(func() { _, _ = io.Copy(down, up); _ = down.Close() })
			c.wg.Go(func() { c.frontend(down, up); _ = up.Close() })
		}
	})
	tb.Cleanup(func() {
		_ = ln.Close()
		c.mu.Lock()
		for _, cn := range c.conns {
			_ = cn.Close()
		}
		c.mu.Unlock()
		c.wg.Wait()
	})
	u.Host = ln.Addr().String()
	return c, u.String()
}

// frontend copies the client's messages to the server, counting them. The
// first message (startup, or an SSL request) has no type byte.
func (c *pgCounter) frontend(down, up net.Conn) {
	r := bufio.NewReader(down)
	var hdr [5]byte
	first := true
	for {
		var body []byte
		if first {
			if _, err := io.ReadFull(r, hdr[1:5]); err != nil {
				return
			}
			n := int(binary.BigEndian.Uint32(hdr[1:5]))
			body = make([]byte, n-4)
			if _, err := io.ReadFull(r, body); err != nil {
				return
			}
			if _, err := up.Write(append(hdr[1:5:5], body...)); err != nil {
				return
			}
			// An SSLRequest (80877103) is followed by another startup.
			first = n == 8 && binary.BigEndian.Uint32(body) == 80877103
			continue
		}
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(hdr[1:5]))
		body = make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		switch hdr[0] {
		case 'Q':
			c.count(string(body))
		case 'S':
			c.count("(extended protocol sync)")
		}
		if _, err := up.Write(append(hdr[:], body...)); err != nil {
			return
		}
	}
}

func (c *pgCounter) count(sql string) {
	key := literals.ReplaceAllString(strings.Join(strings.Fields(sql), " "), "?")
	if len(key) > 90 {
		key = key[:90]
	}
	c.mu.Lock()
	c.trips++
	c.byText[key]++
	c.mu.Unlock()
}

// literals are the values bun writes into a statement's text.
var literals = regexp.MustCompile(`'(?:[^']|'')*'|\b[0-9]+\b`)

// reset zeroes the counts.
func (c *pgCounter) reset() {
	c.mu.Lock()
	c.trips = 0
	c.byText = map[string]int{}
	c.mu.Unlock()
}

// report is the counts per run, most frequent statement first.
func (c *pgCounter) report(runs int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	type kv struct {
		k string
		n int
	}
	var all []kv
	for k, n := range c.byText {
		all = append(all, kv{k, n})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n })
	var b strings.Builder
	fmt.Fprintf(&b, "%.2f round trips per run (%d in %d runs)\n", float64(c.trips)/float64(runs), c.trips, runs)
	for _, e := range all {
		fmt.Fprintf(&b, "  %6.2f  %s\n", float64(e.n)/float64(runs), e.k)
	}
	return b.String()
}

// BenchmarkPostgresRoundTrips counts the round trips to PostgreSQL of short
// runs through the real server (16 clients, as BenchmarkShortRun), with a
// proxy that reads the wire protocol, and reports them per run as
// round-trips/run; -v prints the statements. Run it with -benchtime 500x.
func BenchmarkPostgresRoundTrips(b *testing.B) {
	base := os.Getenv("BREAD_TEST_POSTGRES_URL")
	if base == "" {
		b.Skip("BREAD_TEST_POSTGRES_URL is not set")
	}
	counter, proxied := countPostgres(b, base)
	b.Setenv("BREAD_TEST_POSTGRES_URL", proxied)
	bread := startBread(b, postgresStore(b), 1)
	counter.reset()
	b.ResetTimer()
	d := drive(b, bread.target, b.N, clients)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/d.Seconds(), "bread-runs/s")
	counter.mu.Lock()
	trips := counter.trips
	counter.mu.Unlock()
	b.ReportMetric(float64(trips)/float64(b.N), "round-trips/run")
	b.Log(counter.report(b.N))
	if trips == 0 {
		b.Error(errors.New("no round trip counted: is the proxy in the way?"))
	}
}
