package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/breadai/bread/core"
)

// errClosed is returned by every method of a closed Store.
var errClosed = &core.BreadError{Code: core.CodeStoreClosed, Message: "sqlite store: the store is closed"}

func validation(format string, args ...any) *core.BreadError {
	return &core.BreadError{Code: core.CodeValidationError, Message: "sqlite store: " + fmt.Sprintf(format, args...)}
}

func notFound(sentinel *core.BreadError, format string, args ...any) *core.BreadError {
	return &core.BreadError{Code: sentinel.Code, Message: fmt.Sprintf(format, args...)}
}

// corrupt reports a stored value that no longer decodes: the database was
// changed behind the store's back.
func corrupt(column, id string, err error) *core.BreadError {
	return &core.BreadError{
		Code:    core.CodeStoreError,
		Message: fmt.Sprintf("sqlite store: %s of %q does not decode", column, id),
		Cause:   err,
	}
}

// mapErr turns a driver error into a *core.BreadError. op names the
// operation for the message; onFK, when not nil, is what a foreign-key
// violation means for this operation (a missing session, loop, ...).
// Context errors pass through unchanged, so callers see context.Canceled
// (and core maps it to RUN_CANCELLED).
func (s *Store) mapErr(op string, err error, onFK *core.BreadError) error {
	if err == nil {
		return nil
	}
	var be *core.BreadError
	if errors.As(err, &be) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "sql: database is closed") {
		return errClosed
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		code := se.Code()
		switch code & 0xff {
		case sqlite3.SQLITE_CONSTRAINT:
			if code == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY && onFK != nil {
				return onFK.WithCause(err)
			}
			if code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || code == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
				return &core.BreadError{Code: core.CodeValidationError, Message: "sqlite store: " + op + ": the record already exists", Cause: err}
			}
			return &core.BreadError{Code: core.CodeValidationError, Message: "sqlite store: " + op + ": " + se.Error(), Cause: err}
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return &core.BreadError{
				Code:    core.CodeStoreUnavailable,
				Message: fmt.Sprintf("sqlite store: %s: database %s stayed locked past the busy timeout (%s)", op, s.opts.Path, s.opts.BusyTimeout),
				Cause:   err,
			}
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM,
			sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_FULL, sqlite3.SQLITE_AUTH:
			return &core.BreadError{
				Code:    core.CodeStoreUnavailable,
				Message: fmt.Sprintf("sqlite store: %s: database %s is unavailable: %s", op, s.opts.Path, se.Error()),
				Cause:   err,
			}
		}
	}
	return &core.BreadError{Code: core.CodeStoreError, Message: "sqlite store: " + op + ": " + err.Error(), Cause: err}
}

// checkText refuses a NUL byte in any of values. bun writes values into the
// SQL text, where a NUL cannot be represented, so such a value would
// otherwise fail as an obscure syntax error instead of as bad input.
func checkText(what string, values ...string) error {
	for _, v := range values {
		if strings.IndexByte(v, 0) >= 0 {
			return validation("%s contains a NUL byte", what)
		}
	}
	return nil
}

// hasNUL reports whether any of values holds a NUL byte. A lookup by such a
// key cannot match a stored row, so readers answer it as not found.
func hasNUL(values ...string) bool {
	for _, v := range values {
		if strings.IndexByte(v, 0) >= 0 {
			return true
		}
	}
	return false
}

func tagsHaveNUL(tags map[string]string) bool {
	for k, v := range tags {
		if hasNUL(k, v) {
			return true
		}
	}
	return false
}

func checkTags(tags map[string]string) error {
	for k, v := range tags {
		if err := checkText("a session tag", k, v); err != nil {
			return err
		}
	}
	return nil
}
