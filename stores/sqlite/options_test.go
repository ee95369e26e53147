package sqlite

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

func TestNewRejectsBadOptions(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		want string // part of the message
	}{
		{"empty path", Options{}, "Options.Path is empty"},
		{"NUL in path", Options{Path: "a\x00b.db"}, "NUL"},
		{"negative busy timeout", Options{Path: "x.db", BusyTimeout: -time.Second}, "BusyTimeout"},
		{"unknown synchronous", Options{Path: "x.db", Synchronous: "sometimes"}, "Synchronous"},
		{"negative pool", Options{Path: "x.db", MaxOpenConns: -1}, "MaxOpenConns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.opts)
			if err == nil {
				s.Close()
				t.Fatal("New accepted bad options")
			}
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig {
				t.Fatalf("want INVALID_CONFIG, got %v", err)
			}
			if !strings.Contains(be.Message, c.want) {
				t.Errorf("message %q does not mention %q", be.Message, c.want)
			}
		})
	}
}

func TestDefaultsAndDSN(t *testing.T) {
	cases := []struct {
		name      string
		opts      Options
		wantInDSN []string
		wantConns int
	}{
		{
			name:      "file defaults",
			opts:      Options{Path: "/data/bread.db"},
			wantInDSN: []string{"file:/data/bread.db?", "busy_timeout%285000%29", "foreign_keys%281%29", "journal_mode%28WAL%29", "synchronous%28NORMAL%29", "_txlock=immediate"},
		},
		{
			name:      "memory has one connection and no WAL",
			opts:      Options{Path: MemoryPath, MaxOpenConns: 8},
			wantInDSN: []string{"file::memory:?", "foreign_keys%281%29", "_txlock=immediate"},
			wantConns: 1,
		},
		{
			name:      "URI characters in the path are escaped",
			opts:      Options{Path: "dir/a?b#c%d.db", BusyTimeout: 250 * time.Millisecond, Synchronous: "full"},
			wantInDSN: []string{"file:dir/a%3fb%23c%25d.db?", "busy_timeout%28250%29", "synchronous%28FULL%29"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := c.opts.withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			dsn := o.dsn()
			for _, w := range c.wantInDSN {
				if !strings.Contains(dsn, w) {
					t.Errorf("DSN %q lacks %q", dsn, w)
				}
			}
			if c.opts.Path == MemoryPath && strings.Contains(dsn, "journal_mode") {
				t.Errorf("DSN %q sets a journal mode on an in-memory database", dsn)
			}
			if c.wantConns != 0 && o.MaxOpenConns != c.wantConns {
				t.Errorf("MaxOpenConns: want %d, got %d", c.wantConns, o.MaxOpenConns)
			}
		})
	}
}
