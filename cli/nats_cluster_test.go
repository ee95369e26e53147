package cli_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/teststores"
)

// natsURL returns the shared NATS (with JetStream) of the machine, or
// skips (fails under BREAD_TEST_REQUIRE=1).
func natsURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("BREAD_TEST_NATS_URL")
	if u == "" {
		msg := "BREAD_TEST_NATS_URL is not set (e.g. nats://127.0.0.1:4222): the NATS multi-replica test needs a NATS server with JetStream"
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return u
}

// natsNames are a stream, subject prefix and bucket of this test only,
// deleted when it ends.
func natsNames(t *testing.T, url string) (stream, prefix, bucket string) {
	t.Helper()
	id := strings.ToLower(rand.Text()[:12])
	stream, prefix, bucket = "BREAD_CLUSTER_"+id, "bread.cluster."+id, "bread_cluster_"+id
	t.Cleanup(func() {
		nc, err := nats.Connect(url)
		if err != nil {
			return
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = js.DeleteStream(ctx, stream)
		_ = js.DeleteStream(ctx, "KV_"+bucket+"_leases")
	})
	return stream, prefix, bucket
}

// TestThreeReplicasShareRunsThroughMariaDBAndNATS is the three-replica
// test of cluster_test.go on the other pair of services: three `bread
// start` processes on one MySQL/MariaDB database and one NATS JetStream.
// A run starts on A and is tailed on B (catch-up, then live); it suspends
// for a human and is resumed on C, and B follows the continuation to its
// end; a cancel sent to B stops a run on A; killing A mid-run ends the
// tails on B and C with RUN_LOST.
func TestThreeReplicasShareRunsThroughMariaDBAndNATS(t *testing.T) {
	nu := natsURL(t)
	dbURL := teststores.MySQLURL(t)
	stream, prefix, bucket := natsNames(t, nu)
	files := map[string]string{
		"bread.yaml": `store: {type: mysql, url: "${DB_URL}"}
bus: {type: nats, url: "${NATS_URL}", stream: "${STREAM}", subjectPrefix: "${PREFIX}", bucket: "${BUCKET}", leaseTTL: 1s}
streams: {heartbeat: 200ms}
providers: {replay: {mode: conversation}}
`,
		"agents/publisher/agent.yaml":         "model: {provider: replay, model: t/publisher.jsonl}\n",
		"agents/publisher/tools/confirm.yaml": "type: human\nprompt: Publish?\n",
		"t/publisher.jsonl": `{"call":0,"type":"text-delta","delta":"Let me ask. ","delayMs":700}
{"call":0,"type":"tool-call","toolCallId":"h1","toolName":"human_confirm","input":{"post":"hello"},"delayMs":300}
{"call":0,"type":"finish","finishReason":"tool-calls"}
{"call":1,"type":"text-delta","delta":"Published ","delayMs":300}
{"call":1,"type":"text-delta","delta":"everywhere.","delayMs":300}
{"call":1,"type":"finish","finishReason":"stop"}
`,
		"agents/slow/agent.yaml": "model: {provider: replay, model: t/slow.jsonl}\n",
		"t/slow.jsonl": `{"call":0,"type":"text-delta","delta":"working","delayMs":10}
{"call":0,"type":"text-delta","delta":" forever","delayMs":600000}
{"call":0,"type":"finish","finishReason":"stop"}
`,
	}
	dir := project(t, files)
	env := []string{"DB_URL=" + dbURL, "NATS_URL=" + nu, "STREAM=" + stream, "PREFIX=" + prefix, "BUCKET=" + bucket}
	a := startReplica(t, dir, env)
	b := startReplica(t, dir, env)
	c := startReplica(t, dir, env)

	t.Run("start on A, tail on B, resume on C", func(t *testing.T) {
		run := open(t, "POST", a.base+"/agents/publisher/run", `{"input":"publish hello"}`)
		start, ok := run.next()
		if !ok || start.Crumb.CrumbType() != core.TypeAgentRunStart {
			t.Fatal("the run did not start on A")
		}
		tail := open(t, "GET", b.base+"/runs/"+start.RunID+"/stream", "")
		caught := tail.until(core.TypeHumanRequired)
		if caught[0].Crumb.CrumbType() != core.TypeAgentRunStart || !strings.Contains(kinds(caught), core.TypeTextDelta) {
			t.Fatalf("B catches up then follows live: %s", kinds(caught))
		}
		hr := caught[len(caught)-1].Crumb.(*core.HumanRequired)
		if got := kinds(run.until(core.TypeHumanRequired)); !strings.HasSuffix(got, core.TypeHumanRequired) {
			t.Fatalf("A's stream ends at human:required: %s", got)
		}
		resumed := open(t, "POST", c.base+"/resume/"+hr.CheckpointID, `{"response":{"ok":true}}`).until(core.TypeAgentRunEnd)
		if resumed[0].Crumb.CrumbType() != core.TypeHumanResumed || resumed[0].Seq <= hr.Seq {
			t.Fatalf("C's continuation starts with human:resumed and extends the seq: %s seq %d", kinds(resumed), resumed[0].Seq)
		}
		rest := tail.until(core.TypeAgentRunEnd)
		end := rest[len(rest)-1].Crumb.(*core.AgentRunEnd)
		if out, _ := json.Marshal(end.Output); string(out) != `"Published everywhere."` || !strings.HasPrefix(kinds(rest), core.TypeHumanResumed) {
			t.Fatalf("B follows the continuation from C: %s, output %s", kinds(rest), out)
		}
		if _, more := tail.next(); more {
			t.Fatal("B's tail closes after agent:run:end")
		}
	})

	t.Run("a cancel sent to B stops a run on A", func(t *testing.T) {
		run := open(t, "POST", a.base+"/agents/slow/run", `{"input":"go"}`)
		start, _ := run.next()
		run.until(core.TypeTextDelta)
		resp, err := http.Post(b.base+"/runs/"+start.RunID+"/cancel", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("cancel on B: HTTP %d", resp.StatusCode)
		}
		got := run.until(core.TypeAgentError)
		if ae := got[len(got)-1].Crumb.(*core.AgentError); ae.Error.Code != core.CodeRunCancelled {
			t.Fatalf("A's run ends with %+v", ae.Error)
		}
	})

	t.Run("killing A ends the tails on B and C with RUN_LOST", func(t *testing.T) {
		run := open(t, "POST", a.base+"/agents/slow/run", `{"input":"go"}`)
		start, _ := run.next()
		run.until(core.TypeTextDelta)
		tails := map[string]*frames{
			"B": open(t, "GET", b.base+"/runs/"+start.RunID+"/stream", ""),
			"C": open(t, "GET", c.base+"/runs/"+start.RunID+"/stream", ""),
		}
		for _, tail := range tails {
			tail.until(core.TypeTextDelta)
		}
		if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for name, tail := range tails {
			last := make(chan core.Frame, 1)
			go func() {
				var fr core.Frame
				for {
					next, ok := tail.next()
					if !ok {
						break
					}
					fr = next
				}
				last <- fr
			}()
			select {
			case fr := <-last:
				ae, ok := fr.Crumb.(*core.AgentError)
				if !ok || ae.Error.Code != core.CodeRunLost {
					t.Fatalf("%s's tail ends with %#v, want agent:error RUN_LOST", name, fr.Crumb)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s's tail hangs after A died", name)
			}
		}
	})
}
