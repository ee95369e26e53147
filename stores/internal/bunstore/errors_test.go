package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/breadai/bread/core"
)

func TestMapErr(t *testing.T) {
	own := &core.BreadError{Code: core.CodeNotFound, Message: "mine"}
	fromDialect := &core.BreadError{Code: core.CodeStoreUnavailable, Message: "fake store: down"}
	cases := []struct {
		name    string
		err     error
		closed  bool
		mapped  error
		want    error  // compared with errors.Is
		message string // exact, when not empty
	}{
		{name: "a BreadError passes", err: fmt.Errorf("wrapped: %w", own), mapped: fromDialect, want: own},
		{name: "cancellation passes", err: context.Canceled, mapped: fromDialect, want: context.Canceled},
		{name: "deadline passes", err: fmt.Errorf("query: %w", context.DeadlineExceeded), mapped: fromDialect, want: context.DeadlineExceeded},
		{name: "closed handle of a closed store", err: sql.ErrConnDone, closed: true, mapped: fromDialect, want: core.ErrStoreClosed, message: "fake store: the store is closed"},
		{name: "closed database of a closed store", err: errors.New("sql: database is closed"), closed: true, want: core.ErrStoreClosed},
		{name: "closed handle of an open store goes to the dialect", err: sql.ErrConnDone, mapped: fromDialect, want: fromDialect},
		{name: "the dialect classifies", err: errFakeDriver, mapped: fromDialect, want: fromDialect, message: "fake store: down"},
		{name: "unclassified is STORE_ERROR naming op", err: errFakeDriver, want: &core.BreadError{Code: core.CodeStoreError}, message: "fake store: do things: fake driver failure"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newFake(fakeDialect{mapped: c.mapped})
			s.closed.Store(c.closed)
			got := s.mapErr("do things", c.err, nil)
			if !errors.Is(got, c.want) {
				t.Fatalf("mapErr: want %v, got %v", c.want, got)
			}
			var be *core.BreadError
			if c.message != "" && (!errors.As(got, &be) || be.Message != c.message) {
				t.Errorf("message: want %q, got %v", c.message, got)
			}
		})
	}
	if err := newFake(fakeDialect{}).mapErr("op", nil, nil); err != nil {
		t.Errorf("mapErr(nil): %v", err)
	}
}

// A foreign-key violation means what the operation says, with the dialect's
// cause; without such a meaning it is the dialect's to classify.
func TestMapErrForeignKey(t *testing.T) {
	s := newFake(fakeDialect{})
	onFK := &core.BreadError{Code: core.CodeSessionNotFound, Message: "session \"s\" not found"}
	err := s.mapErr("save", fmt.Errorf("exec: %w", errFakeFK), onFK)
	var be *core.BreadError
	if !errors.As(err, &be) || be.Code != core.CodeSessionNotFound || be.Message != onFK.Message || !errors.Is(err, errFakeFK) {
		t.Fatalf("want onFK caused by the violation, got %#v", err)
	}
	if onFK.Cause != nil {
		t.Fatal("mapErr changed onFK itself")
	}
	if err := s.mapErr("save", errFakeFK, nil); !errors.Is(err, &core.BreadError{Code: core.CodeStoreError}) {
		t.Fatalf("without onFK: want STORE_ERROR from the fallback, got %v", err)
	}
	if err := s.mapErr("save", errFakeDriver, onFK); errors.Is(err, core.ErrSessionNotFound) {
		t.Fatalf("not a violation, yet onFK: %v", err)
	}
}

func TestErrorsNameTheStore(t *testing.T) {
	e := newErrs("fake store")
	if got := e.validation("%s is bad", "x").Message; got != "fake store: x is bad" {
		t.Errorf("validation: %q", got)
	}
	if got := e.corrupt("t.c", "id", errFakeDriver); got.Message != `fake store: t.c of "id" does not decode` || got.Code != core.CodeStoreError || got.Cause != errFakeDriver {
		t.Errorf("corrupt: %+v", got)
	}
	if err := e.checkText("a field", "ok", "n\x00ul"); !errors.Is(err, core.ErrValidation) || err.Error() == "" {
		t.Errorf("checkText with a NUL: %v", err)
	}
	if err := e.checkTags(map[string]string{"k\x00": "v"}); !errors.Is(err, core.ErrValidation) {
		t.Errorf("checkTags with a NUL key: %v", err)
	}
}
