package enginetest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core/modeltest"
	"github.com/breadai/bread/engine"
	"github.com/breadai/bread/server"
)

// Shutdown ends the context of every request: a run started over HTTP ends
// (RUN_CANCELLED) and a passive tail closes, both cleanly, and Serve
// returns nil.
func TestGracefulShutdownEndsOpenStreams(t *testing.T) {
	reached := make(chan struct{})
	f := newFixture(t, engine.Config{}, modeltest.Block(reached, "half"))
	srv, err := server.New(f.inst, server.Options{ShutdownTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()

	run, err := http.Post(base+"/agents/writer/run", "application/json", strings.NewReader(`{"input":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer run.Body.Close()
	first, err := bufio.NewReader(run.Body).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var frame struct{ RunID string }
	if err := json.Unmarshal(first, &frame); err != nil || frame.RunID == "" {
		t.Fatalf("first frame %s: %v", first, err)
	}
	<-reached
	req, _ := http.NewRequest("GET", base+"/runs/"+frame.RunID+"/stream", nil)
	req.Header.Set("Accept", "text/event-stream")
	tail, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer tail.Body.Close()
	if _, err := bufio.NewReader(tail.Body).ReadString('\n'); err != nil {
		t.Fatalf("the tail did not open: %v", err)
	}

	cancel()
	for name, body := range map[string]io.Reader{"run": run.Body, "tail": tail.Body} {
		if _, err := io.ReadAll(body); err != nil {
			t.Fatalf("the %s stream did not end cleanly: %v", name, err)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("Serve = %v", err)
	}
}
