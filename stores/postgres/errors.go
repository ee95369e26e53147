package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/breadai/bread/core"
)

// errClosed is returned by every method of a closed Store.
var errClosed = &core.BreadError{Code: core.CodeStoreClosed, Message: "postgres store: the store is closed"}

func validation(format string, args ...any) *core.BreadError {
	return &core.BreadError{Code: core.CodeValidationError, Message: "postgres store: " + fmt.Sprintf(format, args...)}
}

func notFound(sentinel *core.BreadError, format string, args ...any) *core.BreadError {
	return &core.BreadError{Code: sentinel.Code, Message: fmt.Sprintf(format, args...)}
}

// corrupt reports a stored value that no longer decodes: the database was
// changed behind the store's back.
func corrupt(column, id string, err error) *core.BreadError {
	return &core.BreadError{
		Code:    core.CodeStoreError,
		Message: fmt.Sprintf("postgres store: %s of %q does not decode", column, id),
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
		if s.closed.Load() {
			return errClosed
		}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return s.mapPgError(op, pgErr, onFK)
	}
	if s.unreachable(err) {
		return s.unavailable(op, err)
	}
	return &core.BreadError{Code: core.CodeStoreError, Message: "postgres store: " + op + ": " + err.Error(), Cause: err}
}

// mapPgError maps a server error by its SQLSTATE class.
func (s *Store) mapPgError(op string, e *pgconn.PgError, onFK *core.BreadError) error {
	switch {
	case e.Code == "23503" && onFK != nil: // foreign_key_violation
		return onFK.WithCause(e)
	case e.Code == "23505": // unique_violation
		return &core.BreadError{Code: core.CodeValidationError, Message: "postgres store: " + op + ": the record already exists", Cause: e}
	case strings.HasPrefix(e.Code, "22"), strings.HasPrefix(e.Code, "23"), e.Code == "54000":
		// data exceptions, other integrity violations, program limits: the
		// input cannot be stored as given.
		return &core.BreadError{Code: core.CodeValidationError, Message: "postgres store: " + op + ": " + e.Message, Cause: e}
	case strings.HasPrefix(e.Code, "08"), strings.HasPrefix(e.Code, "53"), strings.HasPrefix(e.Code, "57P"):
		// connection exceptions, insufficient resources, operator
		// intervention (shutdown, crash recovery).
		return s.unavailable(op, e)
	case e.Code == "42P01": // undefined_table
		return &core.BreadError{Code: core.CodeStoreError, Message: "postgres store: " + op + ": " + e.Message + " (has Migrate run?)", Cause: e}
	}
	return &core.BreadError{Code: core.CodeStoreError, Message: "postgres store: " + op + ": " + e.Message, Cause: e}
}

// unreachable reports whether err means the server could not be reached or
// the connection broke.
func (s *Store) unreachable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, driver.ErrBadConn)
}

// unavailable is STORE_UNAVAILABLE naming the server's address. The message
// is built from the parsed configuration, never from the URL, so the
// password cannot leak into it; the cause is the driver's error, whose text
// pgx already keeps free of the password.
func (s *Store) unavailable(op string, err error) *core.BreadError {
	return &core.BreadError{
		Code:    core.CodeStoreUnavailable,
		Message: fmt.Sprintf("postgres store: %s: cannot reach the database at %s", op, s.addr),
		Context: map[string]any{"address": s.addr},
		Cause:   err,
	}
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
