package redis

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/breadai/bread/core"
	goredis "github.com/redis/go-redis/v9"
)

func TestOptions(t *testing.T) {
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	cases := []struct {
		name    string
		opts    Options
		wantErr string // substring of the message; "" means valid
	}{
		{"URL", Options{URL: "redis://127.0.0.1:6379/0"}, ""},
		{"client", Options{Client: client}, ""},
		{"neither", Options{}, "set Options.URL or Options.Client"},
		{"both", Options{URL: "redis://x", Client: client}, "only one"},
		{"bad URL", Options{URL: "http://user:secret@host"}, "not a valid Redis URL"},
		{"negative MaxLen", Options{URL: "redis://x", MaxLen: -1}, "must not be negative"},
		{"negative QueueSize", Options{URL: "redis://x", QueueSize: -1}, "must not be negative"},
		{"negative BlockTimeout", Options{URL: "redis://x", BlockTimeout: -time.Second}, "must not be negative"},
		{"sub-millisecond BlockTimeout", Options{URL: "redis://x", BlockTimeout: time.Microsecond}, "at least 1ms"},
		{"brace in prefix", Options{URL: "redis://x", KeyPrefix: "bread:{x}:"}, "must not contain"},
		{"negative TTLs disable expiry", Options{URL: "redis://x", TTL: -1, IdleTTL: -1}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := New(tc.opts)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				tr.Close()
				return
			}
			var be *core.BreadError
			if !errors.As(err, &be) || be.Code != core.CodeInvalidConfig {
				t.Fatalf("New = %v, want an INVALID_CONFIG BreadError", err)
			}
			if !strings.Contains(be.Message, tc.wantErr) {
				t.Fatalf("message %q does not say %q", be.Message, tc.wantErr)
			}
			if strings.Contains(be.Error(), "secret") {
				t.Fatalf("the error shows the URL's password: %v", be)
			}
		})
	}
}

func TestOptionDefaults(t *testing.T) {
	o, err := Options{URL: "redis://x"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := Options{
		URL: "redis://x", KeyPrefix: "bread:run:", MaxLen: 1000, TTL: time.Hour, IdleTTL: 24 * time.Hour,
		BlockTimeout: 5 * time.Second, QueueSize: 10000, QueueBytes: 64 << 20, PublishTimeout: 250 * time.Millisecond,
		BatchSize: 256, CloseTimeout: 5 * time.Second, ReadPoolSize: 1000, Logger: o.Logger,
	}
	if o != want {
		t.Fatalf("defaults:\n got %+v\nwant %+v", o, want)
	}
	if o.Logger == nil {
		t.Fatal("no default logger")
	}
}

func TestStreamIDs(t *testing.T) {
	next := []struct{ in, want string }{
		{"0-0", "0-1"},
		{"1700000000000-5", "1700000000000-6"},
		{"5-18446744073709551615", "6-0"},
	}
	for _, tc := range next {
		if got, ok := nextID(tc.in); !ok || got != tc.want {
			t.Errorf("nextID(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"", "12", "a-b", "1-", "-1", "18446744073709551615-18446744073709551615", "1-2-3"} {
		if got, ok := nextID(bad); ok {
			t.Errorf("nextID(%q) = %q, want no successor", bad, got)
		}
	}
}

func TestPermanentErrors(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{proto("WRONGTYPE Operation against a key holding the wrong kind of value"), true},
		{proto("ERR syntax error"), true},
		{proto("LOADING Redis is loading the dataset in memory"), false},
		{proto("READONLY You can't write against a read only replica."), false},
		{proto("OOM command not allowed when used memory > 'maxmemory'."), false},
		{proto("CLUSTERDOWN The cluster is down"), false},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
		{goredis.Nil, false},
		{goredis.ErrClosed, false},
	}
	for _, tc := range cases {
		if got := permanent(tc.err); got != tc.want {
			t.Errorf("permanent(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// redisError is an error reply, as go-redis returns them.
type redisError string

func (e redisError) Error() string { return string(e) }
func (redisError) RedisError()     {}

func proto(msg string) error { return redisError(msg) }

// A write retried after Redis applied it is refused for its id, and the
// publisher takes that refusal for the duplicate it is.
func TestRetriedWriteIsRefusedAsADuplicate(t *testing.T) {
	u := os.Getenv("BREAD_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("BREAD_TEST_REQUIRE") == "1" {
			t.Fatal("BREAD_TEST_REQUIRE=1: BREAD_TEST_REDIS_URL is not set")
		}
		t.Skip("BREAD_TEST_REDIS_URL is not set")
	}
	o, err := goredis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(o)
	defer c.Close()
	ctx := context.Background()
	key := "bread:test:dup:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	defer c.Del(ctx, key)
	add := func() error {
		return c.XAdd(ctx, &goredis.XAddArgs{Stream: key, ID: "7-3", Values: []any{frameField, "{}"}}).Err()
	}
	if err := add(); err != nil {
		t.Fatal(err)
	}
	if err := add(); err == nil || !isDuplicateID(err) {
		t.Fatalf("the second XADD of one id: %v, want the refusal isDuplicateID knows", err)
	}
}

func TestRedisVersion(t *testing.T) {
	for _, c := range []struct {
		info string
		want [2]int
		ok   bool
	}{
		{"# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n", [2]int{7, 0}, true},
		{"redis_version:6.2.0\r\n", [2]int{6, 2}, true},
		{"# Server\r\nredis_mode:standalone\r\n", [2]int{}, false},
		{"redis_version:x.y\r\n", [2]int{}, false},
	} {
		if got, ok := redisVersion(c.info); got != c.want || ok != c.ok {
			t.Errorf("redisVersion(%q) = %v, %v; want %v, %v", c.info, got, ok, c.want, c.ok)
		}
	}
}
