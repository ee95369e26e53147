package enginetest_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/transports/httpstream"
	"github.com/breadai/bread/transports/httpstream/streamtest"
)

const benchDeltas = 10000

// benchServer serves an engine whose agent streams benchDeltas text deltas
// per run, through an Ingress on a plain net/http router.
func benchServer(b *testing.B) string {
	b.Helper()
	chunks := make([]string, benchDeltas)
	for i := range chunks {
		chunks[i] = "tok" + strconv.Itoa(i) + " "
	}
	model := modeltest.New(modeltest.Text(chunks...))
	inst, err := engine.New(engine.Config{
		Store: memory.New(), Providers: model.Registry("scripted"),
		Agents: []*core.Agent{{ID: "greeter", Model: core.ModelRef{Provider: "scripted", Model: "m"}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := inst.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = inst.Stop(context.Background()) })
	return streamtest.Serve(b, httpstream.New(httpstream.Options{}), inst).URL + "/agents/greeter/run"
}

// benchStream measures one format: a run of 10,000 text deltas over
// loopback through the Ingress (router, runner, choke point, crumb log,
// encoder), beside a baseline handler that writes the same bytes with plain
// net/http and a flush per piece. Both report crumbs/s; the Ingress also
// reports its ratio to the baseline measured just before it. split cuts the
// recorded wire into the pieces the baseline flushes; count counts the
// crumbs a client reads.
func benchStream(b *testing.B, accept string, split func([]byte) [][]byte, count func(io.Reader) int) {
	url := benchServer(b)
	post := func(url string) (*http.Response, error) {
		req, err := http.NewRequest("POST", url, strings.NewReader(`{"input":"go"}`))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		return http.DefaultClient.Do(req)
	}
	// The exact bytes of one run, for the baseline to replay.
	res, err := post(url)
	if err != nil {
		b.Fatal(err)
	}
	wire, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	if res.Header.Get("Content-Type") != accept {
		b.Fatalf("Accept %s answered %s", accept, res.Header.Get("Content-Type"))
	}
	pieces := split(wire)
	crumbs := count(bytes.NewReader(wire))
	baseline := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", accept)
		rc := http.NewResponseController(w)
		for _, p := range pieces {
			if _, err := w.Write(p); err != nil {
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
			n += count(res.Body)
			res.Body.Close()
		}
		if n != crumbs*b.N {
			b.Fatalf("read %d crumbs, want %d", n, crumbs*b.N)
		}
		rate := float64(n) / b.Elapsed().Seconds()
		b.ReportMetric(rate, "crumbs/s")
		return rate
	}
	name := "ndjson"
	if accept == httpstream.ContentTypeSSE {
		name = "sse"
	}
	b.Run("baseline", func(b *testing.B) { baseRate = run(b, baseline.URL) })
	b.Run(name, func(b *testing.B) {
		rate := run(b, url)
		if baseRate > 0 {
			b.ReportMetric(rate/baseRate, "x-baseline")
		}
	})
}

// BenchmarkStream10kDeltasNDJSON: the NDJSON format, one flush per line.
func BenchmarkStream10kDeltasNDJSON(b *testing.B) {
	benchStream(b, httpstream.ContentTypeNDJSON,
		func(wire []byte) [][]byte {
			lines := bytes.SplitAfter(wire, []byte("\n"))
			return lines[:len(lines)-1]
		},
		func(r io.Reader) int {
			sc := bufio.NewScanner(r)
			sc.Buffer(nil, 1<<20)
			n := 0
			for sc.Scan() {
				n++
			}
			if sc.Err() != nil {
				return -1
			}
			return n
		})
}

// BenchmarkStream10kDeltasSSE: the SSE format, one flush per event.
func BenchmarkStream10kDeltasSSE(b *testing.B) {
	benchStream(b, httpstream.ContentTypeSSE,
		func(wire []byte) [][]byte {
			events := bytes.SplitAfter(wire, []byte("\n\n"))
			return events[:len(events)-1]
		},
		func(r io.Reader) int {
			sc := bufio.NewScanner(r)
			sc.Buffer(nil, 1<<20)
			n := 0
			for sc.Scan() {
				if bytes.HasPrefix(sc.Bytes(), []byte("data: ")) {
					n++
				}
			}
			if sc.Err() != nil {
				return -1
			}
			return n
		})
}
