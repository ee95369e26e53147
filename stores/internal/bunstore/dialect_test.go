package bunstore

import (
	"context"
	"errors"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/core"
)

// fakeDialect is a Dialect without a database, for the parts of the Store
// that never reach one.
type fakeDialect struct {
	features Features
	mapped   error // what MapError answers
}

var errFakeDriver = errors.New("fake driver failure")

func (fakeDialect) Name() string                                    { return "fake store" }
func (d fakeDialect) Features() Features                            { return d.features }
func (fakeDialect) Migrate(context.Context, bun.Tx) (func(), error) { return nil, nil }
func (d fakeDialect) MapError(string, error, *core.BreadError) error {
	return d.mapped
}
func (fakeDialect) InsertionOrder(table string) string { return table + "_pos" }
func (fakeDialect) TagConditions(map[string]string) []Condition {
	return nil
}

// newFake is a Store on d without a database.
func newFake(d fakeDialect) *Store {
	s := new(Store)
	Init(s, nil, d)
	return s
}
