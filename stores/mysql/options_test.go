package mysql_test

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/stores/mysql"
)

const password = "n0t-f0r-y0ur-eyes"

// Bad options and connection strings are INVALID_CONFIG at New, before any
// connection, and the message never quotes the password.
func TestNewRejectsBadOptions(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for name, o := range map[string]mysql.Options{
		"no connection string":   {},
		"no database":            {URL: "bread:" + password + "@tcp(127.0.0.1:3306)/"},
		"malformed DSN":          {URL: "bread:" + password + "@tcp(127.0.0.1:3306"},
		"another scheme":         {URL: "postgres://bread:" + password + "@127.0.0.1/bread"},
		"malformed URL":          {URL: "mysql://bread:" + password + "@127.0.0.1:port/bread"},
		"bad URL parameter":      {URL: "mysql://bread:" + password + "@127.0.0.1/bread?timeout=soon"},
		"negative MaxOpenConns":  {URL: "root@tcp(127.0.0.1:3306)/bread", MaxOpenConns: -1},
		"negative ConnectTimout": {URL: "root@tcp(127.0.0.1:3306)/bread", ConnectTimeout: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := mysql.New(o)
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig {
				t.Fatalf("want INVALID_CONFIG, got %v", err)
			}
			if strings.Contains(be.Error(), password) {
				t.Errorf("the message shows the password: %s", be.Error())
			}
		})
	}
}

// A DSN, a mysql:// URL and DATABASE_URL are all accepted without a server.
func TestNewAcceptsDSNsAndURLs(t *testing.T) {
	for _, u := range []string{
		"root@tcp(127.0.0.1:3306)/bread",
		"bread:" + password + "@tcp(db:3306)/bread?timeout=2s",
		"mysql://bread:" + password + "@db/bread",
		"mysql://bread@db:3307/bread?timeout=2s",
	} {
		s, err := mysql.New(mysql.Options{URL: u})
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		_ = s.Close()
	}
	t.Setenv("DATABASE_URL", "root@tcp(127.0.0.1:3306)/bread")
	s, err := mysql.New(mysql.Options{})
	if err != nil {
		t.Fatalf("from DATABASE_URL: %v", err)
	}
	_ = s.Close()
}

// An unreachable server is STORE_UNAVAILABLE naming host:port, for every
// kind of call, and the password appears nowhere in the error chain. New
// does not connect.
func TestUnreachableServerIsUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	s, err := mysql.New(mysql.Options{URL: "bread:" + password + "@tcp(" + addr + ")/bread?timeout=2s"})
	if err != nil {
		t.Fatalf("New must not need the server: %v", err)
	}
	defer s.Close()
	ctx := t.Context()
	for name, call := range map[string]func() error{
		"Migrate":       func() error { return s.Migrate(ctx) },
		"GetSession":    func() error { _, err := s.GetSession(ctx, "x"); return err },
		"CreateSession": func() error { _, err := s.CreateSession(ctx, core.NewSession{}); return err },
		"AppendCrumbs": func() error {
			return s.AppendCrumbs(ctx, []core.CrumbLogEntry{{RunID: "r", Seq: 1, Type: core.TypeTextDelta, Crumb: &core.TextDelta{Delta: "x"}}})
		},
	} {
		err := call()
		var be *core.BreadError
		if !errors.As(err, &be) || be.Code != core.CodeStoreUnavailable {
			t.Fatalf("%s: want STORE_UNAVAILABLE, got %v", name, err)
		}
		if !strings.Contains(be.Message, addr) {
			t.Errorf("%s: message %q does not name %s", name, be.Message, addr)
		}
		for e := error(be); e != nil; e = errors.Unwrap(e) {
			if strings.Contains(e.Error(), password) || strings.Contains(fmt.Sprintf("%+v", e), password) {
				t.Fatalf("%s: the error chain shows the password: %q", name, e.Error())
			}
		}
	}
}
