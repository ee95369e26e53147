// Command push-receiver receives the A2A push notifications of a bread
// server (protocols/a2a with push notifications on), checks that each one
// is bread's (its Bread-Signature, made with the shared webhook secret)
// and meant for this receiver (its X-A2A-Notification-Token, or its
// Authorization header), and prints one line per task update:
//
//	BREAD_WEBHOOK_SECRET=change-me go run . -token my-token   # from examples/a2a/push-receiver
//
// A notification is the task as JSON (A2A v0.3) or a StreamResponse
// holding it, {"task": {...}} (v1.0); both print the same way. With
// -fail-first N the first N notifications are answered 500, so the
// server's retry can be watched. See README.md.
package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/breadai/bread/engine/webhook"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "push-receiver:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:3004", "the address to listen on (port 0: any free port)")
	token := flag.String("token", "", "the token the push config was given: a notification must carry it as X-A2A-Notification-Token")
	bearer := flag.String("bearer", "", "the credentials the push config's Bearer authentication was given: a notification must carry them as Authorization: Bearer")
	failFirst := flag.Int("fail-first", 0, "answer the first N notifications 500 (to watch the server retry)")
	tolerance := flag.Duration("tolerance", 5*time.Minute, "how old (or new) a signature may be")
	flag.Parse()
	secret := os.Getenv("BREAD_WEBHOOK_SECRET")
	if secret == "" {
		return errors.New("set BREAD_WEBHOOK_SECRET to the server's webhooks.secret: without it no notification can be verified")
	}

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	rcv := &receiver{secret: secret, token: *token, bearer: *bearer, failLeft: *failFirst, tolerance: *tolerance, out: os.Stdout, log: log}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rcv, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening on http://%s\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// maxBody bounds a notification: a task with its artifacts, never a file's
// bytes (bread sends generated files by URI).
const maxBody = 4 << 20

// receiver is the HTTP handler: it refuses what it cannot verify and prints
// what it can.
type receiver struct {
	secret, token, bearer string
	tolerance             time.Duration
	log                   *slog.Logger

	mu       sync.Mutex // orders the printed lines and guards failLeft
	failLeft int
	out      io.Writer
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST a notification", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "the body could not be read", http.StatusRequestEntityTooLarge)
		return
	}
	// The signature first: it proves the body is the server's, unchanged
	// and recent (a captured notification cannot be replayed later).
	if err := webhook.Verify(rc.secret, r.Header.Get("Bread-Signature"), body, time.Now(), rc.tolerance); err != nil {
		rc.log.Warn("refused: bad signature", "error", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	// Then that it is meant for this receiver: the token and credentials
	// given with the push config come back with each of its notifications.
	if rc.token != "" && !same(r.Header.Get("X-A2A-Notification-Token"), rc.token) {
		rc.log.Warn("refused: wrong X-A2A-Notification-Token")
		http.Error(w, "wrong token", http.StatusUnauthorized)
		return
	}
	if rc.bearer != "" && !same(r.Header.Get("Authorization"), "Bearer "+rc.bearer) {
		rc.log.Warn("refused: wrong Authorization")
		http.Error(w, "wrong credentials", http.StatusUnauthorized)
		return
	}
	t, err := decode(body)
	if err != nil {
		rc.log.Warn("refused: not a task", "error", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.failLeft > 0 {
		// Answered 500, the server tries this notification again after
		// its backoff (webhooks.backoff, doubled each time).
		rc.failLeft--
		rc.log.Info("answered 500 on purpose (-fail-first)", "task", t.ID, "state", t.state())
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(rc.out, t.line())
	w.WriteHeader(http.StatusNoContent)
}

// same compares in constant time, as credentials should be.
func same(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// task is what a notification says of the task, in either spec version's
// shape: v0.3 states are "completed", v1.0 "TASK_STATE_COMPLETED"; a v0.3
// part is {"kind": "text", "text"}, a v1.0 one {"text"}.
type task struct {
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State   string `json:"state"`
		Message *struct {
			Parts []part `json:"parts"`
		} `json:"message"`
	} `json:"status"`
	Artifacts []struct {
		Parts []part `json:"parts"`
	} `json:"artifacts"`
}

type part struct {
	Text string `json:"text"`
}

// decode reads a notification: a v1.0 StreamResponse ({"task": {...}}) or
// a v0.3 task.
func decode(body []byte) (*task, error) {
	var v1 struct {
		Task *task `json:"task"`
	}
	if err := json.Unmarshal(body, &v1); err != nil {
		return nil, fmt.Errorf("the body is not JSON: %w", err)
	}
	t := v1.Task
	if t == nil {
		t = &task{}
		if err := json.Unmarshal(body, t); err != nil {
			return nil, fmt.Errorf("the body is not a task: %w", err)
		}
	}
	if t.ID == "" || t.Status.State == "" {
		return nil, errors.New("the body is not a task: no id or status")
	}
	return t, nil
}

// state is the task's state by its v0.3 name, whichever version sent it.
func (t *task) state() string {
	s := strings.ToLower(strings.TrimPrefix(t.Status.State, "TASK_STATE_"))
	return strings.ReplaceAll(s, "_", "-")
}

// line is the printed update: the task, its state, the status message's
// text (the question of an input-required task) and the artifacts' text
// so far.
func (t *task) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "task %s (context %s) %s", t.ID, t.ContextID, t.state())
	if t.Status.Message != nil {
		if s := text(t.Status.Message.Parts); s != "" {
			fmt.Fprintf(&b, " message=%q", s)
		}
	}
	var arts []part
	for _, a := range t.Artifacts {
		arts = append(arts, a.Parts...)
	}
	if s := text(arts); s != "" {
		fmt.Fprintf(&b, " text=%q", s)
	}
	return b.String()
}

func text(parts []part) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
