package httpchunked_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/breadai/bread/core/modeltest"
)

const benchDeltas = 10000

// BenchmarkStream10kDeltas streams a run of 10,000 text deltas over
// loopback through the chunked transport (server, runner, choke point, crumb
// log, encoder), beside a baseline handler that writes the same bytes with
// plain net/http and a flush per line. Both report crumbs/s; the transport
// also reports its ratio to the baseline measured just before it.
func BenchmarkStream10kDeltas(b *testing.B) {
	chunks := make([]string, benchDeltas)
	for i := range chunks {
		chunks[i] = "tok" + strconv.Itoa(i) + " "
	}
	r := newRemote(b, nil, modeltest.Text(chunks...))
	post := func(url string) (*http.Response, error) {
		return http.Post(url, "application/json", strings.NewReader(`{"input":"go"}`))
	}

	// The exact bytes of one run, for the baseline to replay.
	res, err := post(r.url + "/agents/greeter/run")
	if err != nil {
		b.Fatal(err)
	}
	wire, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.SplitAfter(wire, []byte("\n"))
	lines = lines[:len(lines)-1]
	baseline := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		rc := http.NewResponseController(w)
		for _, l := range lines {
			if _, err := w.Write(l); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}))
	defer baseline.Close()

	var baseRate float64
	run := func(b *testing.B, url string) float64 {
		b.ReportAllocs()
		b.SetBytes(int64(len(wire)))
		n := 0
		for b.Loop() {
			res, err := post(url)
			if err != nil {
				b.Fatal(err)
			}
			n += countLines(b, res.Body)
			res.Body.Close()
		}
		if n != len(lines)*b.N {
			b.Fatalf("read %d lines, want %d", n, len(lines)*b.N)
		}
		rate := float64(n) / b.Elapsed().Seconds()
		b.ReportMetric(rate, "crumbs/s")
		return rate
	}
	b.Run("baseline", func(b *testing.B) { baseRate = run(b, baseline.URL) })
	b.Run("chunked", func(b *testing.B) {
		rate := run(b, r.url+"/agents/greeter/run")
		if baseRate > 0 {
			b.ReportMetric(rate/baseRate, "x-baseline")
		}
	})
}

func countLines(b *testing.B, r io.Reader) int {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}
