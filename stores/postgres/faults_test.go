package postgres_test

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/postgres"
)

const password = "n0t-f0r-y0ur-eyes"

// closedPort returns a local TCP port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// An unreachable server is STORE_UNAVAILABLE naming host:port, for every
// kind of call, and the password appears nowhere in the error chain. New
// itself does not connect.
func TestUnreachableServerIsUnavailable(t *testing.T) {
	port := closedPort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s, err := postgres.New(postgres.Options{URL: "postgres://bread:" + password + "@" + addr + "/bread?sslmode=disable&connect_timeout=2"})
	if err != nil {
		t.Fatalf("New must not need the server: %v", err)
	}
	defer s.Close()
	ctx := t.Context()
	calls := map[string]func() error{
		"Migrate":       func() error { return s.Migrate(ctx) },
		"GetSession":    func() error { _, err := s.GetSession(ctx, "x"); return err },
		"CreateSession": func() error { _, err := s.CreateSession(ctx, core.NewSession{}); return err },
		"SuspendRun": func() error {
			return s.SuspendRun(ctx, "s", nil, core.CheckpointRecord{ID: "cp", SessionID: "s"})
		},
		"AppendCrumbs": func() error {
			return s.AppendCrumbs(ctx, []core.CrumbLogEntry{{RunID: "r", Seq: 1, Type: core.TypeTextDelta, Crumb: &core.TextDelta{Delta: "x"}}})
		},
	}
	for name, call := range calls {
		err := call()
		var be *core.BreadError
		if !errors.As(err, &be) || be.Code != core.CodeStoreUnavailable {
			t.Fatalf("%s: want STORE_UNAVAILABLE, got %v", name, err)
		}
		if !errors.Is(err, core.ErrStoreUnavailable) {
			t.Errorf("%s: errors.Is(err, core.ErrStoreUnavailable) is false", name)
		}
		if !strings.Contains(be.Message, addr) {
			t.Errorf("%s: message %q does not name %s", name, be.Message, addr)
		}
		for e := error(be); e != nil; e = errors.Unwrap(e) {
			if strings.Contains(e.Error(), password) || strings.Contains(fmt.Sprintf("%+v", e), password) {
				t.Fatalf("%s: the error chain shows the password: %q", name, e.Error())
			}
		}
	}
}

// A malformed URL is rejected by New, before any connection.
func TestMalformedURLRejectedAtNew(t *testing.T) {
	_, err := postgres.New(postgres.Options{URL: "postgres://bread:" + password + "@db.example:port/bread"})
	if !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
		t.Fatalf("want INVALID_CONFIG, got %v", err)
	}
	if strings.Contains(err.Error(), password) {
		t.Fatalf("the error shows the password: %v", err)
	}
}

// Migrate is idempotent and safe to run from several processes at once.
func TestMigrateConcurrentAndIdempotent(t *testing.T) {
	url := freshSchemaURL(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := postgres.New(postgres.Options{URL: url, Embed: bagOfWords})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			errs <- s.Migrate(t.Context())
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent Migrate: %v", err)
		}
	}
	s, err := postgres.New(postgres.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateSession(t.Context(), core.NewSession{ID: "kept"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	if _, err := s.GetSession(t.Context(), "kept"); err != nil {
		t.Fatalf("Migrate again lost data: %v", err)
	}
}

// Bad input is refused whole and never breaks the connection: the values
// bun writes into the SQL text cannot smuggle a NUL or close a quote.
func TestBadInputWritesNothing(t *testing.T) {
	s := newStore(t, postgres.Options{})
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, core.NewSession{ID: "s'; DROP TABLE bread_sessions; --", Tags: map[string]string{`k"'\`: `v\'"`}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListSessions(ctx, core.SessionFilter{Tags: map[string]string{`k"'\`: `v\'"`}})
	if err != nil || len(got) != 1 {
		t.Fatalf("quotes in ids and tags: %v, %v", got, err)
	}
	err = s.SuspendRun(ctx, got[0].ID, []core.SessionMessage{
		{Role: core.RoleUser, Content: []byte(`"ok"`)},
		{Role: core.RoleUser, Content: []byte(`{"unterminated"`)},
	}, core.CheckpointRecord{ID: "cp", SessionID: got[0].ID})
	if !errors.Is(err, core.ErrValidation) {
		t.Fatalf("SuspendRun with invalid JSON: want VALIDATION_ERROR, got %v", err)
	}
	if _, err := s.IngestDocument(ctx, core.NewDocument{AgentID: "a", Title: "t", Content: "nul\x00byte"}); !errors.Is(err, core.ErrValidation) {
		t.Fatalf("a NUL byte: want VALIDATION_ERROR, got %v", err)
	}
	msgs, err := s.GetMessages(ctx, got[0].ID)
	if err != nil || len(msgs) != 0 {
		t.Fatalf("a failed SuspendRun left %d messages (%v)", len(msgs), err)
	}
	if _, err := s.GetCheckpoint(ctx, "cp"); !errors.Is(err, core.ErrCheckpointNotFound) {
		t.Fatalf("a failed SuspendRun left its checkpoint: %v", err)
	}
}
