package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/sqlite"
)

func breadCode(err error) string {
	var be *core.BreadError
	if errors.As(err, &be) {
		return be.Code
	}
	return ""
}

// An unopenable database file is STORE_UNAVAILABLE naming the path, at
// first use rather than at New.
func TestUnopenableFileIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing-dir", "bread.db")
	s, err := sqlite.New(sqlite.Options{Path: path})
	if err != nil {
		t.Fatalf("New must not touch the file: %v", err)
	}
	defer s.Close()
	for name, call := range map[string]func() error{
		"Migrate":    func() error { return s.Migrate(t.Context()) },
		"GetSession": func() error { _, err := s.GetSession(t.Context(), "x"); return err },
	} {
		err := call()
		if breadCode(err) != core.CodeStoreUnavailable {
			t.Fatalf("%s: want STORE_UNAVAILABLE, got %v", name, err)
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("%s: message %q does not name %s", name, err, path)
		}
	}
}

// The file path may hold characters that mean something in a URI.
func TestPathWithURICharacters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "odd ?name# 100%.db")
	s := openStore(t, sqlite.Options{Path: path})
	if _, err := s.CreateSession(t.Context(), core.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is not at the exact path: %v", err)
	}
}

// The pragmas hold on every pooled connection, not only the first.
func TestPragmasOnEveryConnection(t *testing.T) {
	s := openStore(t, sqlite.Options{Path: filepath.Join(t.TempDir(), "p.db"), MaxOpenConns: 4, BusyTimeout: 1234 * time.Millisecond})
	ctx := t.Context()
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 4 {
		c, err := s.DB().DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var fk, busy int
		var journal string
		if err := c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal); err != nil {
			t.Fatal(err)
		}
		if fk != 1 || busy != 1234 || journal != "wal" {
			t.Errorf("connection %d: foreign_keys=%d busy_timeout=%d journal_mode=%s, want 1, 1234, wal", i, fk, busy, journal)
		}
	}
}

// A writer that outwaits the busy timeout gets STORE_UNAVAILABLE, never a
// raw SQLITE_BUSY.
func TestBusyPastTimeoutIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	holder := openStore(t, sqlite.Options{Path: path})
	waiter := openStore(t, sqlite.Options{Path: path, BusyTimeout: 50 * time.Millisecond})
	tx, err := holder.DB().BeginTx(t.Context(), nil) // IMMEDIATE: takes the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	_, err = waiter.CreateSession(t.Context(), core.NewSession{ID: "blocked"})
	if breadCode(err) != core.CodeStoreUnavailable {
		t.Fatalf("want STORE_UNAVAILABLE while another connection holds the write lock, got %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := waiter.CreateSession(t.Context(), core.NewSession{ID: "blocked"}); err != nil {
		t.Fatalf("after the lock is released: %v", err)
	}
}

// Two in-memory stores are two databases.
func TestMemoryStoresAreSeparate(t *testing.T) {
	a := openStore(t, sqlite.Options{Path: sqlite.MemoryPath})
	b := openStore(t, sqlite.Options{Path: sqlite.MemoryPath})
	if _, err := a.CreateSession(t.Context(), core.NewSession{ID: "only-in-a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetSession(t.Context(), "only-in-a"); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("b sees a's session: %v", err)
	}
}

// Bad input is refused whole: nothing of a failed batch or turn is written.
func TestBadInputWritesNothing(t *testing.T) {
	s := newFileStore(t)
	ctx := t.Context()
	if _, err := s.CreateSession(ctx, core.NewSession{ID: "s"}); err != nil {
		t.Fatal(err)
	}
	good := core.SessionMessage{Role: core.RoleUser, Content: []byte(`"ok"`)}
	bad := core.SessionMessage{Role: core.RoleUser, Content: []byte(`{"unterminated"`)}
	err := s.SuspendRun(ctx, "s", []core.SessionMessage{good, bad}, core.CheckpointRecord{ID: "cp", SessionID: "s"})
	if breadCode(err) != core.CodeValidationError {
		t.Fatalf("SuspendRun with invalid JSON: want VALIDATION_ERROR, got %v", err)
	}
	err = s.AppendCrumbs(ctx, []core.CrumbLogEntry{
		{RunID: "r", Seq: 1, Type: core.TypeTextDelta, Crumb: &core.TextDelta{Delta: "a"}},
		{RunID: "r", Seq: 2, Type: core.TypeTextDelta, Crumb: &core.TextDelta{Delta: "b"}, SessionID: "no-such-session"},
	})
	if !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("AppendCrumbs naming a missing session: want ErrSessionNotFound, got %v", err)
	}
	if _, err := s.CreateSession(ctx, core.NewSession{ID: "nul\x00id"}); breadCode(err) != core.CodeValidationError {
		t.Fatalf("CreateSession with a NUL byte: want VALIDATION_ERROR, got %v", err)
	}
	msgs, _ := s.GetMessages(ctx, "s")
	crumbs, _ := s.GetCrumbs(ctx, "r", 0, 0)
	cps, _ := s.ListCheckpoints(ctx)
	if len(msgs)+len(crumbs)+len(cps) != 0 {
		t.Fatalf("failed writes left %d messages, %d crumbs, %d checkpoints", len(msgs), len(crumbs), len(cps))
	}
	if _, err := s.GetSession(ctx, "nul\x00id"); !errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("GetSession with a NUL byte: want ErrSessionNotFound, got %v", err)
	}
}

// Close is idempotent and a closed store errors instead of panicking, even
// for a call racing the Close.
func TestCloseRacingCalls(t *testing.T) {
	s := newFileStore(t)
	ctx := context.Background()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			_, err := s.GetSession(ctx, "x")
			if err != nil && !errors.Is(err, core.ErrSessionNotFound) && !errors.Is(err, core.ErrStoreClosed) {
				t.Errorf("GetSession racing Close: %v", err)
				return
			}
		}
	}()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := s.Migrate(ctx); !errors.Is(err, core.ErrStoreClosed) {
		t.Fatalf("Migrate after Close: %v", err)
	}
}
