package mysql

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/breadai/bread/core"
)

// Options configures a Store. Everything is optional when DATABASE_URL is
// set.
type Options struct {
	// URL is the connection string: go-sql-driver/mysql's DSN
	// ("user:password@tcp(host:3306)/dbname?param=value") or a URL
	// ("mysql://user:password@host:3306/dbname?param=value"). Empty means
	// the DATABASE_URL environment variable. It must name a database.
	URL string

	// MaxOpenConns caps the connection pool. Zero means 10.
	MaxOpenConns int

	// ConnectTimeout bounds one connection attempt when the URL sets no
	// timeout. Zero means 10s.
	ConnectTimeout time.Duration

	// Logger receives the store's few notices. Nil means slog.Default().
	Logger *slog.Logger
}

const (
	defaultMaxOpenConns   = 10
	defaultConnectTimeout = 10 * time.Second
)

// sessionSQLMode is the sql_mode of every connection: strict (a value that
// does not fit is an error, never truncated) and || as string
// concatenation, as in standard SQL, which the shared statements use.
const sessionSQLMode = "'TRADITIONAL,PIPES_AS_CONCAT,NO_ENGINE_SUBSTITUTION'"

// config is Options validated and parsed.
type config struct {
	opts Options
	dsn  *driver.Config
	addr string // host:port for messages, never the password
}

// parse validates o. Every failure is INVALID_CONFIG with a message built
// from fixed text: the connection string is never echoed, since it may
// hold a password.
func (o Options) parse() (cfg config, err error) {
	switch {
	case o.MaxOpenConns < 0:
		return cfg, invalidConfig("Options.MaxOpenConns is negative")
	case o.ConnectTimeout < 0:
		return cfg, invalidConfig("Options.ConnectTimeout is negative")
	}
	s, source := o.URL, "Options.URL"
	if s == "" {
		s, source = os.Getenv("DATABASE_URL"), "DATABASE_URL"
	}
	if strings.TrimSpace(s) == "" {
		return cfg, invalidConfig("no connection string: set Options.URL or DATABASE_URL (user:password@tcp(host:3306)/dbname)")
	}
	dsn, err := parseConnString(s)
	if err != nil {
		return cfg, invalidConfig(fmt.Sprintf("%s is not a valid MySQL connection string: %s", source, err))
	}
	if dsn.DBName == "" {
		return cfg, invalidConfig(source + " names no database (…/dbname)")
	}
	if o.MaxOpenConns == 0 {
		o.MaxOpenConns = defaultMaxOpenConns
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = defaultConnectTimeout
	}
	if dsn.Timeout == 0 {
		dsn.Timeout = o.ConnectTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	// What the store relies on, whatever the URL says: times scanned as
	// time.Time in UTC (the version table), UPDATE reporting the rows it
	// matched rather than those it changed (a touch of a session in the
	// same millisecond still finds it), utf8mb4, and sessionSQLMode.
	dsn.ParseTime, dsn.Loc, dsn.ClientFoundRows = true, time.UTC, true
	dsn.Collation = "utf8mb4_general_ci"
	if dsn.Params == nil {
		dsn.Params = map[string]string{}
	}
	dsn.Params["sql_mode"] = sessionSQLMode
	return config{opts: o, dsn: dsn, addr: dsn.Addr}, nil
}

// parseConnString reads a DSN or a mysql:// URL. Its errors are fixed
// words: the driver's own quote the string.
func parseConnString(s string) (*driver.Config, error) {
	if strings.HasPrefix(s, "mysql://") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("malformed URL")
		}
		host := u.Host
		if u.Port() == "" {
			host = net.JoinHostPort(u.Hostname(), "3306")
		}
		cfg := driver.NewConfig()
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		cfg.Net, cfg.Addr, cfg.DBName = "tcp", host, strings.TrimPrefix(u.Path, "/")
		if u.RawQuery == "" {
			return cfg, nil
		}
		// The query carries the DSN's parameters: let the driver read them.
		withParams, err := driver.ParseDSN("/?" + u.RawQuery)
		if err != nil {
			return nil, fmt.Errorf("invalid parameters")
		}
		withParams.User, withParams.Passwd, withParams.Net, withParams.Addr, withParams.DBName = cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName
		return withParams, nil
	}
	if strings.Contains(s, "://") {
		return nil, fmt.Errorf("unsupported scheme (want a DSN or mysql://)")
	}
	cfg, err := driver.ParseDSN(s)
	if err != nil {
		return nil, fmt.Errorf("malformed DSN (want user:password@tcp(host:3306)/dbname)")
	}
	return cfg, nil
}

func invalidConfig(msg string) *core.BreadError {
	return &core.BreadError{Code: core.CodeInvalidConfig, Message: "mysql store: " + msg}
}
