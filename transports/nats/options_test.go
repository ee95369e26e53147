package nats_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	bnats "github.com/breadai/bread/transports/nats"
)

func TestNewRefusesBadOptions(t *testing.T) {
	const url = "nats://127.0.0.1:1" // never dialled successfully: New does no I/O that can fail
	for _, c := range []struct {
		name string
		opts bnats.Options
		want string
	}{
		{"no URL", bnats.Options{}, "set Options.URL or Options.Conn"},
		{"http URL", bnats.Options{URL: "http://127.0.0.1:4222"}, "is not nats, tls, ws or wss"},
		{"no host", bnats.Options{URL: "nats://"}, "not a NATS URL"},
		{"stream with a dot", bnats.Options{URL: url, Stream: "a.b"}, "Stream must be"},
		{"wildcard prefix", bnats.Options{URL: url, SubjectPrefix: "bread.*"}, "SubjectPrefix must be"},
		{"empty token", bnats.Options{URL: url, SubjectPrefix: "bread..run"}, "SubjectPrefix must be"},
		{"negative queue", bnats.Options{URL: url, QueueSize: -1}, "must not be negative"},
		{"negative age", bnats.Options{URL: url, MaxAge: -time.Second}, "must not be negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := bnats.New(c.opts)
			if err == nil {
				_ = tr.Close()
			}
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig || !strings.Contains(be.Message, c.want) {
				t.Fatalf("got %v, want INVALID_CONFIG with %q", err, c.want)
			}
		})
	}
}

func TestNewHidesThePassword(t *testing.T) {
	_, err := bnats.New(bnats.Options{URL: "http://user:s3cret@127.0.0.1:4222"})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("got %v", err)
	}
}

func TestSubjectsAreOneTokenPerRun(t *testing.T) {
	tr, err := bnats.New(bnats.Options{URL: "nats://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	seen := map[string]string{}
	for _, c := range []struct{ run, want string }{
		{"01a24193-e8f0-7e22", "bread.run.01a24193-e8f0-7e22"},
		{"run_1", "bread.run.run_1"},
		{"a.b", "bread.run.=612e62"},
		{"a*", "bread.run.=612a"},
		{"=612e62", "bread.run.=3d363132653632"}, // never the subject of "a.b"
		{"with space", "bread.run.=77697468207370616365"},
	} {
		got := tr.Subject(c.run)
		if got != c.want {
			t.Errorf("Subject(%q) = %q, want %q", c.run, got, c.want)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("%q and %q share the subject %q", c.run, other, got)
		}
		seen[got] = c.run
	}
}
