package reconnecttest_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/stores/postgres"
	"github.com/breadai/bread/stores/teststores"
	"github.com/breadai/bread/transports/httpstream"
	"github.com/breadai/bread/transports/httpstream/remoteagent"
	"github.com/breadai/bread/transports/httpstream/streamtest"
	bnats "github.com/breadai/bread/transports/nats"
	bredis "github.com/breadai/bread/transports/redis"
)

// deltas is the run's length; cuts how many seeded points the client's
// connection is dropped at.
const (
	deltas = 10000
	cuts   = 20
	seed   = 28
)

var formats = []remoteagent.Format{remoteagent.NDJSON, remoteagent.SSE}

// On every store, a 10,000-delta run relayed by the Go client whose
// connection drops at 20 seeded points arrives exactly: every delta once,
// in order, the terminal crumb, the run's text byte for byte. The run is
// paced 1,200 deltas ahead of the client: a reconnect lands in a delta
// window whose oldest frames are more than a thousand back and whose log
// entry may not be committed yet.
func TestReconnectLosesNothingOnEveryStore(t *testing.T) {
	teststores.Each(t, func(t *testing.T, s teststores.Store) {
		for _, format := range formats {
			t.Run(format.String(), func(t *testing.T) {
				run := streamtest.NewLongRun(deltas, 1200)
				inst := start(t, s.Open(t), nil, run.Turn())
				url := streamtest.Serve(t, httpstream.New(httpstream.Options{}), inst).URL
				relay(t, run, format, url, "")
			})
		}
	})
}

// Across replicas: two engines share one PostgreSQL store and a bus (each
// replica with its own connection to it); the run executes on replica A,
// the client's first connection is to A and every reconnect goes to
// replica B, which replays the log and follows the run through the bus.
// Paced 100 deltas ahead (reconnects in the open window, from B's
// subscription) and 3,000 ahead (B's tail behind the head: on Redis it
// catches up from the log whenever Redis has trimmed past it, and goes on).
func TestReconnectLosesNothingAcrossReplicas(t *testing.T) {
	for _, bus := range buses {
		t.Run(bus.name, func(t *testing.T) {
			url := os.Getenv(bus.env)
			if url == "" {
				msg := bus.env + " is not set (e.g. " + bus.example + "): the cross-replica case on " + bus.name + " needs its server"
				if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
					t.Fatal(msg + ", and BREAD_TEST_REQUIRE=1 forbids skipping")
				}
				t.Skip(msg)
			}
			for _, lead := range []int{100, 3000} {
				for _, format := range formats {
					t.Run(format.String()+"/"+strconv.Itoa(lead), func(t *testing.T) {
						pgURL := teststores.PostgresURL(t)
						// Registered before the engines start, so it runs
						// after their Stop has closed both buses.
						newReplica := bus.open(t, url)
						run := streamtest.NewLongRun(deltas, lead)
						a := start(t, openPostgres(t, pgURL, true), newReplica(), run.Turn())
						b := start(t, openPostgres(t, pgURL, false), newReplica())
						urlA := streamtest.Serve(t, httpstream.New(httpstream.Options{}), a).URL
						urlB := streamtest.Serve(t, httpstream.New(httpstream.Options{}), b).URL
						relay(t, run, format, urlA, urlB)
					})
				}
			}
		})
	}
}

// busCase is a bus the cross-replica case runs on: open gives a test its
// own namespace on the server at url (removed when the test ends) and
// returns a function making one replica's bus in it; the engine's Stop
// closes each.
type busCase struct {
	name, env, example string
	open               func(t *testing.T, url string) func() core.BreadBus
}

var buses = []busCase{
	{name: "redis", env: "BREAD_TEST_REDIS_URL", example: "redis://127.0.0.1:6379/0", open: openRedis},
	{name: "nats", env: "BREAD_TEST_NATS_URL", example: "nats://127.0.0.1:4222", open: openNATS},
}

// openRedis: one key prefix per test; the run's keys expire a minute
// after it ends.
func openRedis(t *testing.T, url string) func() core.BreadBus {
	prefix := "bread:test:reconnect:" + rand.Text()[:12] + ":"
	return func() core.BreadBus {
		t.Helper()
		tr, err := bredis.New(bredis.Options{URL: url, KeyPrefix: prefix, TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
}

// openNATS: one stream and subject prefix per test, the stream deleted
// when the test ends.
func openNATS(t *testing.T, url string) func() core.BreadBus {
	id := strings.ToLower(rand.Text()[:12])
	stream, subjects := "BREAD_TEST_RECONNECT_"+id, "bread.test.reconnect."+id
	t.Cleanup(func() {
		nc, err := nats.Connect(url)
		if err != nil {
			t.Logf("cleanup: %v", err)
			return
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err == nil {
			err = js.DeleteStream(context.Background(), stream)
		}
		if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			t.Logf("cleanup: deleting stream %s: %v", stream, err)
		}
	})
	return func() core.BreadBus {
		t.Helper()
		tr, err := bnats.New(bnats.Options{URL: url, Stream: stream, SubjectPrefix: subjects})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
}

// relay runs "writer" through the Go remote-agent client at url (its
// reconnects sent to tailURL when set), cutting the connection at the
// seeded points, and checks that the client relayed the run exactly.
func relay(t *testing.T, run *streamtest.LongRun, format remoteagent.Format, url, tailURL string) {
	t.Helper()
	cutter := &streamtest.Cutter{TailURL: tailURL}
	agent := remoteagent.New(remoteagent.Options{
		// A slow shared machine may need a few tries to reconnect; what
		// is relayed is checked exactly whatever the number of tries.
		URL: url, Format: format, RetryDelay: 5 * time.Millisecond, MaxRetries: 10,
		HTTPClient: &http.Client{Transport: cutter},
	})
	got := streamtest.RelayWithCuts(t, agent, "writer", run, cutter, streamtest.Cuts(seed, len(run.Text)*9/10, cuts))
	if got.Err != nil {
		t.Fatalf("the run failed after %d bytes of text: %v", len(got.Text), got.Err)
	}
	if got.Last == nil || got.Last.CrumbType() != core.TypeAgentRunEnd {
		t.Fatalf("the run's last crumb is %v, want agent:run:end", got.Last)
	}
	if got.Text != run.Text {
		t.Fatalf("relayed %d bytes of text, the run's %d; first difference at byte %d", len(got.Text), len(run.Text), firstDiff(got.Text, run.Text))
	}
	if want := []string{core.TypeAgentRunStart, core.TypeAgentRunEnd}; len(got.Durable) != 2 || got.Durable[0] != want[0] || got.Durable[1] != want[1] {
		t.Fatalf("durable crumbs %v, want %v each once", got.Durable, want)
	}
	// Every cut is followed by a reconnect; a reconnect attempt that
	// itself fails on a loaded machine is retried, so there may be more
	// reconnects than cuts (the text above is exact whatever their number;
	// CI once saw 16 reconnects for 15 cuts).
	if got.Points != cuts || got.Cuts > cutter.Tails() {
		t.Fatalf("%d of %d cut points passed, %d connections cut, %d reconnects", got.Points, cuts, got.Cuts, cutter.Tails())
	}
	t.Logf("%d connections cut at %d points, %d reconnects, %d deltas relayed", got.Cuts, cuts, cutter.Tails(), got.Deltas)
}

// start runs an engine with the scripted agent "writer" on store, and bus
// when not nil (the in-process bus otherwise).
func start(t *testing.T, store core.BreadStore, bus core.BreadBus, turns ...modeltest.Turn) *engine.Instance {
	t.Helper()
	model := modeltest.New(turns...)
	inst, err := engine.New(engine.Config{
		Store: store, Bus: bus, Providers: model.Registry("scripted"),
		Agents: []*core.Agent{{ID: "writer", Model: core.ModelRef{Provider: "scripted", Model: "m"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Stop(context.Background()) })
	return inst
}

// openPostgres opens a store on the schema of url, migrating it when
// migrate is set: each replica has its own pool on the one database.
func openPostgres(t *testing.T, url string, migrate bool) core.BreadStore {
	t.Helper()
	s, err := postgres.New(postgres.Options{URL: url, MaxOpenConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if migrate {
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
