package sqlite

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/internal/bunstore"
)

// Conflict is false: SQLite has one writer at a time, and a lock held past
// the busy timeout is STORE_UNAVAILABLE, not a conflict to run again.
func (dialect) Conflict(error) bool { return false }

// ForeignKeyViolation is SQLITE_CONSTRAINT_FOREIGNKEY.
func (dialect) ForeignKeyViolation(err error) (error, bool) {
	var se *sqlite.Error
	return err, errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// MapError classifies SQLite's result codes: constraint violations are bad
// input, a lock held past the busy timeout and an unusable file are
// STORE_UNAVAILABLE naming the path.
func (d dialect) MapError(op string, err error) error {
	if bunstore.ClosedHandle(err) {
		// The database handle was closed under an open Store (through DB).
		return &core.BreadError{Code: core.CodeStoreClosed, Message: "sqlite store: the store is closed"}
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return nil
	}
	code := se.Code()
	switch code & 0xff {
	case sqlite3.SQLITE_CONSTRAINT:
		if code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || code == sqlite3.SQLITE_CONSTRAINT_UNIQUE {
			return &core.BreadError{Code: core.CodeValidationError, Message: "sqlite store: " + op + ": the record already exists", Cause: err}
		}
		return &core.BreadError{Code: core.CodeValidationError, Message: "sqlite store: " + op + ": " + se.Error(), Cause: err}
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return &core.BreadError{
			Code:    core.CodeStoreUnavailable,
			Message: fmt.Sprintf("sqlite store: %s: database %s stayed locked past the busy timeout (%s)", op, d.opts.Path, d.opts.BusyTimeout),
			Cause:   err,
		}
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM,
		sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_FULL, sqlite3.SQLITE_AUTH:
		return &core.BreadError{
			Code:    core.CodeStoreUnavailable,
			Message: fmt.Sprintf("sqlite store: %s: database %s is unavailable: %s", op, d.opts.Path, se.Error()),
			Cause:   err,
		}
	}
	return nil
}
