package postgres

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
)

const secret = "s3cr3t-Pa55word"

func TestParseRejectsBadConnectionStrings(t *testing.T) {
	cases := []struct {
		name, url, want string
	}{
		{"bad port", "postgres://bread:" + secret + "@db.example:54x2/bread", "invalid port"},
		{"port out of range", "postgres://bread:" + secret + "@db.example:99999/bread", "invalid port"},
		{"bad escape in password", "postgres://bread:" + secret + "%zz@db.example/bread", "not a valid"},
		{"bad sslmode", "postgres://bread:" + secret + "@db.example/bread?sslmode=sometimes", "sslmode"},
		{"other scheme", "mysql://bread:" + secret + "@db.example/bread", "not a valid"},
		{"keyword/value garbage", "host=db.example password=" + secret + " port=abc", "not a valid"},
		{"bad connect_timeout", "postgres://bread:" + secret + "@db.example/bread?connect_timeout=soon", "not a valid"},
		{"only spaces", "   ", "no connection string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Options{URL: c.url}.parse()
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig {
				t.Fatalf("want INVALID_CONFIG, got %v", err)
			}
			if !strings.Contains(be.Message, c.want) {
				t.Errorf("message %q does not say %q", be.Message, c.want)
			}
			assertNoSecret(t, err)
		})
	}
}

func TestParseOptions(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	cases := []struct {
		name string
		opts Options
		want string // INVALID_CONFIG message part; "" means valid
	}{
		{"no URL and no DATABASE_URL", Options{}, "set Options.URL or DATABASE_URL"},
		{"negative pool", Options{URL: "postgres://h/db", MaxOpenConns: -1}, "MaxOpenConns"},
		{"negative timeout", Options{URL: "postgres://h/db", ConnectTimeout: -time.Second}, "ConnectTimeout"},
		{"unknown vector mode", Options{URL: "postgres://h/db", Vectors: VectorMode(9)}, "Vectors"},
		{"URL", Options{URL: "postgres://bread:" + secret + "@db.example:6543/bread?search_path=app"}, ""},
		{"keyword/value", Options{URL: "host=db.example port=6543 dbname=bread"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := c.opts.parse()
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, &core.BreadError{Code: core.CodeInvalidConfig}) {
					t.Fatalf("want INVALID_CONFIG about %q, got %v", c.want, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.addr != "db.example:6543" {
				t.Errorf("addr: want db.example:6543, got %s", cfg.addr)
			}
			if cfg.opts.MaxOpenConns != defaultMaxOpenConns || cfg.conn.ConnectTimeout != defaultConnectTimeout || cfg.opts.Logger == nil {
				t.Errorf("defaults not applied: %+v, connect timeout %s", cfg.opts, cfg.conn.ConnectTimeout)
			}
		})
	}
}

func TestParseReadsDATABASE_URL(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://bread:"+secret+"@env.example:5433/bread")
	cfg, err := Options{}.parse()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.addr != "env.example:5433" {
		t.Errorf("addr: want env.example:5433, got %s", cfg.addr)
	}
	t.Setenv("DATABASE_URL", "postgres://bread:"+secret+"@env.example:bad/bread")
	_, err = Options{}.parse()
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL is not a valid") {
		t.Fatalf("a bad DATABASE_URL must be named as such, got %v", err)
	}
	assertNoSecret(t, err)
	// An explicit URL wins over the environment.
	cfg, err = Options{URL: "postgres://opt.example/bread"}.parse()
	if err != nil || cfg.addr != "opt.example:5432" {
		t.Fatalf("Options.URL must win: %v, %s", err, cfg.addr)
	}
}

// assertNoSecret fails when the password shows anywhere in err's chain.
func assertNoSecret(t *testing.T, err error) {
	t.Helper()
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), secret) {
			t.Fatalf("the error chain shows the password: %q", e.Error())
		}
	}
	var be *core.BreadError
	if errors.As(err, &be) {
		for k, v := range be.Context {
			if strings.Contains(k, secret) || strings.Contains(fmtAny(v), secret) {
				t.Fatalf("the error context shows the password: %s=%v", k, v)
			}
		}
	}
}
