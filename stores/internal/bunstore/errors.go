package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/breadai/bread/core"
)

// errs makes the errors whose message names the store.
type errs struct {
	prefix      string           // the dialect's Name and ": "
	storeClosed *core.BreadError // every call on a closed Store
}

func newErrs(name string) errs {
	return errs{
		prefix:      name + ": ",
		storeClosed: &core.BreadError{Code: core.CodeStoreClosed, Message: name + ": the store is closed"},
	}
}

func (e errs) validation(format string, args ...any) *core.BreadError {
	return &core.BreadError{Code: core.CodeValidationError, Message: e.prefix + fmt.Sprintf(format, args...)}
}

// corrupt reports a stored value that no longer decodes: the database was
// changed behind the store's back.
func (e errs) corrupt(column, id string, err error) *core.BreadError {
	return &core.BreadError{
		Code:    core.CodeStoreError,
		Message: fmt.Sprintf("%s%s of %q does not decode", e.prefix, column, id),
		Cause:   err,
	}
}

func notFound(sentinel *core.BreadError, format string, args ...any) *core.BreadError {
	return &core.BreadError{Code: sentinel.Code, Message: fmt.Sprintf(format, args...)}
}

// sessionFK is what a foreign-key violation means for a row naming
// sessionID.
func sessionFK(sessionID string) *core.BreadError {
	return notFound(core.ErrSessionNotFound, "session %q not found", sessionID)
}

// mapErr turns a driver error into a *core.BreadError. op names the
// operation for the message; onFK, when not nil, is what a foreign-key
// violation means for this operation (a missing session, loop, ...).
// Context errors pass through unchanged, so callers see context.Canceled
// (and core maps it to RUN_CANCELLED). The dialect classifies the rest.
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
	if ClosedHandle(err) && s.closed.Load() {
		return s.storeClosed
	}
	if onFK != nil {
		// onFK stays out of the dialect's interface call, which would move
		// it to the heap.
		if cause, ok := s.d.ForeignKeyViolation(err); ok {
			return onFK.WithCause(cause)
		}
	}
	if mapped := s.d.MapError(op, err); mapped != nil {
		return mapped
	}
	return &core.BreadError{Code: core.CodeStoreError, Message: s.prefix + op + ": " + err.Error(), Cause: err}
}

// MapError is s's mapping of a driver error to a *core.BreadError, the
// dialect's MapError included, for dialect code that queries the database
// itself.
func MapError(s *Store, op string, err error, onFK *core.BreadError) error {
	return s.mapErr(op, err, onFK)
}

// ClosedHandle reports whether err says the *sql.DB, a connection or a
// prepared statement of it is closed.
func ClosedHandle(err error) bool {
	msg := err.Error()
	return errors.Is(err, sql.ErrConnDone) || strings.Contains(msg, "sql: database is closed") || strings.Contains(msg, "sql: statement is closed")
}
