package bunstore

import (
	"context"
	"errors"

	"github.com/uptrace/bun"
)

// fakeDialect is a Dialect without a database, for the parts of the Store
// that never reach one.
type fakeDialect struct {
	features Features
	mapped   error // what MapError answers
}

var (
	errFakeDriver = errors.New("fake driver failure")
	errFakeFK     = errors.New("fake foreign-key violation")
)

func (fakeDialect) Name() string         { return "fake store" }
func (d fakeDialect) Features() Features { return d.features }
func (fakeDialect) Schema() Schema       { return Schema{} }
func (fakeDialect) MigrationLock(context.Context, *bun.DB, func(context.Context, bun.IDB) error) error {
	return nil
}
func (fakeDialect) AfterMigrations(context.Context, bun.IDB) (func(), error) { return nil, nil }
func (fakeDialect) ForeignKeyViolation(err error) (error, bool) {
	return err, errors.Is(err, errFakeFK)
}
func (d fakeDialect) MapError(string, error) error     { return d.mapped }
func (fakeDialect) InsertionOrder(table string) string { return table + "_pos" }
func (fakeDialect) Conflict(err error) bool            { return errors.Is(err, errConflict) }
func (fakeDialect) TagConditions(map[string]string) []Condition {
	return nil
}

// newFake is a Store on d without a database.
func newFake(d fakeDialect) *Store {
	s := new(Store)
	Init(s, nil, d)
	return s
}
