package httpsse_test

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

// BenchmarkStream10kDeltas streams a run of 10,000 text deltas over
// loopback through the SSE transport, beside a baseline handler that writes
// the same bytes with plain net/http and a flush per event. Both report
// crumbs/s; the transport also reports its ratio to the baseline.
func BenchmarkStream10kDeltas(b *testing.B) {
	chunks := make([]string, 10000)
	for i := range chunks {
		chunks[i] = "tok" + strconv.Itoa(i) + " "
	}
	r := newRemote(b, modeltest.Text(chunks...))
	post := func(url string) (*http.Response, error) {
		return http.Post(url, "application/json", strings.NewReader(`{"input":"go"}`))
	}
	res, err := post(r.url + "/agents/greeter/run")
	if err != nil {
		b.Fatal(err)
	}
	wire, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	events := bytes.SplitAfter(wire, []byte("\n\n"))
	events = events[:len(events)-1]
	crumbs := bytes.Count(wire, []byte("\ndata: ")) + bytes.Count(wire[:6], []byte("data: "))
	baseline := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, ev := range events {
			if _, err := w.Write(ev); err != nil {
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
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if bytes.HasPrefix(sc.Bytes(), []byte("data: ")) {
					n++
				}
			}
			res.Body.Close()
		}
		if n != crumbs*b.N {
			b.Fatalf("read %d events, want %d", n, crumbs*b.N)
		}
		rate := float64(n) / b.Elapsed().Seconds()
		b.ReportMetric(rate, "crumbs/s")
		return rate
	}
	b.Run("baseline", func(b *testing.B) { baseRate = run(b, baseline.URL) })
	b.Run("sse", func(b *testing.B) {
		rate := run(b, r.url+"/agents/greeter/run")
		if baseRate > 0 {
			b.ReportMetric(rate/baseRate, "x-baseline")
		}
	})
}
