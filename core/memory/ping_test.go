package memory_test

import (
	"errors"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/core/memory"
)

func TestPing(t *testing.T) {
	s := memory.New()
	var p core.Pinger = s
	if err := p.Ping(t.Context()); err != nil {
		t.Fatalf("Ping on an open store: %v", err)
	}
	s.Close()
	var be *core.BreadError
	if err := p.Ping(t.Context()); !errors.As(err, &be) || be.Code != core.CodeStoreClosed {
		t.Fatalf("Ping after Close: want STORE_CLOSED, got %v", err)
	}
}
