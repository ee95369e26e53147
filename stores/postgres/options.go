package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/breadai/bread/core"
)

// EmbedFunc turns text into an embedding vector. Every call for one store
// must return vectors of one dimension.
type EmbedFunc func(ctx context.Context, text string) ([]float32, error)

// VectorMode chooses how embeddings are stored when Options.Embed is set.
type VectorMode int

const (
	// VectorAuto uses pgvector when Migrate can enable the extension
	// (CREATE EXTENSION IF NOT EXISTS vector) and a real[] column ranked by
	// cosine similarity in SQL otherwise. An existing embedding column keeps
	// the kind it was created with.
	VectorAuto VectorMode = iota
	// VectorPgvector requires pgvector: Migrate fails when the extension
	// cannot be enabled.
	VectorPgvector
	// VectorArray never uses pgvector: embeddings are real[] and ranked in
	// SQL, with no extension needed.
	VectorArray
)

func (m VectorMode) String() string {
	switch m {
	case VectorAuto:
		return "auto"
	case VectorPgvector:
		return "pgvector"
	case VectorArray:
		return "array"
	}
	return "VectorMode(" + strconv.Itoa(int(m)) + ")"
}

// Options configures a Store. Everything is optional when DATABASE_URL is
// set.
type Options struct {
	// URL is the connection string: a postgres:// or postgresql:// URL or
	// a keyword/value string ("host=... dbname=..."), as libpq and pgx
	// accept. Empty means the DATABASE_URL environment variable. Any
	// run-time parameter pgx does not know rides along to the server, so
	// "?search_path=myschema" puts the bread_* tables in myschema.
	URL string

	// Embed, when set, turns on semantic search: documents (by content)
	// and knowledge nodes (by label) are embedded on write and searched by
	// cosine similarity. Without it search is keyword (ILIKE).
	Embed EmbedFunc

	// Vectors chooses the embedding column kind; see VectorMode. It
	// matters only with Embed.
	Vectors VectorMode

	// MaxOpenConns caps the connection pool. Zero means 10.
	MaxOpenConns int

	// ConnectTimeout bounds one connection attempt when the URL sets no
	// connect_timeout. Zero means 10s.
	ConnectTimeout time.Duration

	// Logger receives the store's few notices (which vector mode Migrate
	// chose). Nil means slog.Default().
	Logger *slog.Logger
}

const (
	defaultMaxOpenConns   = 10
	defaultConnectTimeout = 10 * time.Second
)

// config is Options validated and parsed.
type config struct {
	opts Options
	conn *pgx.ConnConfig
	addr string // host:port for messages, never the password
}

// parse validates o. Every failure is INVALID_CONFIG with a message built
// from fixed text: a malformed URL is never echoed, since it may hold a
// password.
func (o Options) parse() (cfg config, err error) {
	switch {
	case o.MaxOpenConns < 0:
		return cfg, invalidConfig("Options.MaxOpenConns is negative")
	case o.ConnectTimeout < 0:
		return cfg, invalidConfig("Options.ConnectTimeout is negative")
	case o.Vectors < VectorAuto || o.Vectors > VectorArray:
		return cfg, invalidConfig("Options.Vectors is not a known VectorMode")
	}
	url := o.URL
	source := "Options.URL"
	if url == "" {
		url, source = os.Getenv("DATABASE_URL"), "DATABASE_URL"
	}
	if strings.TrimSpace(url) == "" {
		return cfg, invalidConfig("no connection string: set Options.URL or DATABASE_URL (postgres://user@host:5432/db)")
	}
	conn, err := parseConnString(url)
	if err != nil {
		return cfg, invalidConfig(fmt.Sprintf("%s is not a valid PostgreSQL connection string: %s", source, describeParseError(url, err)))
	}
	if conn.Host == "" {
		return cfg, invalidConfig(source + " names no host")
	}
	if o.MaxOpenConns == 0 {
		o.MaxOpenConns = defaultMaxOpenConns
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = defaultConnectTimeout
	}
	if conn.ConnectTimeout == 0 {
		conn.ConnectTimeout = o.ConnectTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	// bun writes every value into the SQL text itself, so statements carry
	// no parameters: the simple protocol runs each in one round trip, where
	// the default would prepare and cache every distinct text.
	conn.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return config{opts: o, conn: conn, addr: net.JoinHostPort(conn.Host, strconv.Itoa(int(conn.Port)))}, nil
}

// parseConnString is pgx.ParseConfig made total: a panic inside the parser
// is reported as an error, never propagated to the caller of New.
func parseConnString(s string) (conn *pgx.ConnConfig, err error) {
	defer func() {
		if r := recover(); r != nil {
			conn, err = nil, fmt.Errorf("parser panic")
		}
	}()
	return pgx.ParseConfig(s)
}

// parseErrorReasons are every reason describeParseError gives.
var parseErrorReasons = []string{
	"invalid port", "invalid sslmode", "unusable TLS settings", "invalid connect_timeout",
	"invalid target_session_attrs", "unknown or unreadable service", "invalid percent-escape",
	"malformed URL", "unsupported scheme (want postgres:// or postgresql://)", "malformed keyword/value string",
}

// describeParseError names what is wrong with a connection string in fixed
// words. pgx's own message quotes the string (redacting the password as
// best it can) and wraps net/url errors that quote it verbatim, so none of
// its text is passed on.
func describeParseError(connString string, err error) string {
	msg := err.Error()
	isURL := strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://")
	switch {
	case strings.Contains(msg, "invalid port"):
		return "invalid port"
	case strings.Contains(msg, "sslmode"):
		return "invalid sslmode"
	case strings.Contains(msg, "sslrootcert"), strings.Contains(msg, "sslcert"), strings.Contains(msg, "sslkey"), strings.Contains(msg, "certificate"), strings.Contains(msg, "tls"):
		return "unusable TLS settings"
	case strings.Contains(msg, "connect_timeout"):
		return "invalid connect_timeout"
	case strings.Contains(msg, "target_session_attrs"):
		return "invalid target_session_attrs"
	case strings.Contains(msg, "service"):
		return "unknown or unreadable service"
	case strings.Contains(msg, "escape"):
		return "invalid percent-escape"
	case isURL:
		return "malformed URL"
	case strings.Contains(connString, "://"):
		return "unsupported scheme (want postgres:// or postgresql://)"
	}
	return "malformed keyword/value string"
}

func invalidConfig(msg string) *core.BreadError {
	return &core.BreadError{Code: core.CodeInvalidConfig, Message: "postgres store: " + msg}
}
