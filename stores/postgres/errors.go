package postgres

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/breadai/bread/core"
)

// Conflict is SQLSTATE 40P01 (deadlock_detected) and 40001
// (serialization_failure): the server rolled the transaction back for
// another's sake.
func (dialect) Conflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// ForeignKeyViolation is SQLSTATE 23503; the server's error is the cause.
func (dialect) ForeignKeyViolation(err error) (error, bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" {
		return pgErr, true
	}
	return nil, false
}

// MapError classifies a pgx error: a server error by its SQLSTATE class,
// and a server that cannot be reached or a connection that broke as
// STORE_UNAVAILABLE naming the address.
func (d dialect) MapError(op string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return d.s.mapPgError(op, pgErr)
	}
	if d.s.unreachable(err) {
		return d.s.unavailable(op, err)
	}
	return nil
}

// mapPgError maps a server error by its SQLSTATE class.
func (s *Store) mapPgError(op string, e *pgconn.PgError) error {
	switch {
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
