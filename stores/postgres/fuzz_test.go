package postgres

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
)

func fmtAny(v any) string { return fmt.Sprint(v) }

// fixedMessage reports whether msg is one of the messages New builds from
// fixed words only.
func fixedMessage(msg string) bool {
	for _, source := range []string{"Options.URL", "DATABASE_URL"} {
		for _, reason := range parseErrorReasons {
			if msg == "postgres store: "+source+" is not a valid PostgreSQL connection string: "+reason {
				return true
			}
		}
		if msg == "postgres store: "+source+" names no host" {
			return true
		}
	}
	return strings.HasPrefix(msg, "postgres store: no connection string: ")
}

// FuzzNew feeds New arbitrary connection strings. It must never panic nor
// connect, and a rejection is INVALID_CONFIG in fixed words that never
// quote the input (which may hold a password).
func FuzzNew(f *testing.F) {
	for _, seed := range []string{
		"postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
		"postgresql://u:p@h1:1,h2:2/db?target_session_attrs=read-write",
		"postgres://u:p%zz@h/db", "postgres://[::1]:5432/db", "postgres://u@/db?host=/tmp",
		"host=h port=5432 dbname=db password='a b'", "host=h port=x", "postgres://h:99999/db",
		"postgres://h/db?sslmode=verify-full&sslrootcert=/nonexistent", "postgres://h/db?connect_timeout=-1",
		"postgres://%", "postgres://@:/", "=", "'", "host='unterminated", "postgres://h/db?search_path=a%00b",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, url string) {
		s, err := New(Options{URL: url})
		if err == nil {
			if s.addr == "" {
				t.Fatalf("accepted %q without an address", url)
			}
			_ = s.Close()
			return
		}
		var be *core.BreadError
		if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig {
			t.Fatalf("New(%q): want INVALID_CONFIG, got %v", url, err)
		}
		if be.Cause != nil {
			t.Fatalf("New(%q): the error carries a cause that may quote the input: %v", url, be.Cause)
		}
		if !fixedMessage(be.Message) {
			t.Fatalf("New(%q): the message is not one of the fixed ones, so it may quote the input: %s", url, be.Message)
		}
	})
}
