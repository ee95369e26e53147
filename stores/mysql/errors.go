package mysql

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"

	mysqldriver "github.com/go-sql-driver/mysql"

	"github.com/breadai/bread/core"
)

// Server error numbers the store gives a meaning.
const (
	errDupEntry         = 1062 // ER_DUP_ENTRY
	errNoReferencedRow  = 1452 // ER_NO_REFERENCED_ROW_2: a foreign key names no row
	errNoSuchTable      = 1146 // ER_NO_SUCH_TABLE
	errTooManyConns     = 1040 // ER_CON_COUNT_ERROR
	errServerShutdown   = 1053 // ER_SERVER_SHUTDOWN
	errBadNull          = 1048 // ER_BAD_NULL_ERROR
	errTruncatedValue   = 1292 // ER_TRUNCATED_WRONG_VALUE
	errOutOfRange       = 1264 // ER_WARN_DATA_OUT_OF_RANGE
	errIncorrectString  = 1366 // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: not UTF-8
	errDataTooLong      = 1406 // ER_DATA_TOO_LONG: a key past 255 bytes
	errInvalidJSON      = 3140 // ER_INVALID_JSON_TEXT (MySQL)
	errConstraintFailed = 4025 // ER_CONSTRAINT_FAILED (MariaDB CHECK)
	errLockDeadlock     = 1213 // ER_LOCK_DEADLOCK: the transaction was rolled back
	errLockWaitTimeout  = 1205 // ER_LOCK_WAIT_TIMEOUT
)

// Conflict is a deadlock InnoDB broke by rolling this transaction back,
// and a lock wait that timed out (the committer rolls the transaction back
// then). A fenced write of a record not written yet locks the gap its key
// falls in (REPEATABLE READ), and two such writes inserting into one gap
// deadlock: seen as cli.TestAMySQLStoreQueuesOnSQLite's background request
// answered HTTP 500 under CI's load.
func (dialect) Conflict(err error) bool {
	var me *mysqldriver.MySQLError
	return errors.As(err, &me) && (me.Number == errLockDeadlock || me.Number == errLockWaitTimeout)
}

// ForeignKeyViolation is error 1452; the server's error is the cause.
func (dialect) ForeignKeyViolation(err error) (error, bool) {
	var me *mysqldriver.MySQLError
	if errors.As(err, &me) && me.Number == errNoReferencedRow {
		return me, true
	}
	return nil, false
}

// MapError classifies a driver error: a server error by its number, and a
// server that cannot be reached or a connection that broke as
// STORE_UNAVAILABLE naming the address.
func (d dialect) MapError(op string, err error) error {
	var me *mysqldriver.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case errDupEntry:
			return &core.BreadError{Code: core.CodeValidationError, Message: "mysql store: " + op + ": the record already exists", Cause: me}
		case errBadNull, errTruncatedValue, errOutOfRange, errIncorrectString, errDataTooLong, errInvalidJSON, errConstraintFailed:
			return &core.BreadError{Code: core.CodeValidationError, Message: "mysql store: " + op + ": " + me.Message, Cause: me}
		case errTooManyConns, errServerShutdown:
			return d.s.unavailable(op, me)
		case errNoSuchTable:
			return &core.BreadError{Code: core.CodeStoreError, Message: "mysql store: " + op + ": " + me.Message + " (has Migrate run?)", Cause: me}
		}
		return &core.BreadError{Code: core.CodeStoreError, Message: "mysql store: " + op + ": " + me.Message, Cause: me}
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, mysqldriver.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return d.s.unavailable(op, err)
	}
	return nil
}

// unavailable is STORE_UNAVAILABLE naming the server's address, built from
// the parsed configuration, never from the connection string, so the
// password cannot leak into it.
func (s *Store) unavailable(op string, err error) *core.BreadError {
	return &core.BreadError{
		Code:    core.CodeStoreUnavailable,
		Message: fmt.Sprintf("mysql store: %s: cannot reach the database at %s", op, s.addr),
		Context: map[string]any{"address": s.addr},
		Cause:   err,
	}
}
