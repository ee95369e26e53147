package redis

import (
	"context"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// reader is the connection one subscription reads on.
//
// go-redis does not interrupt a blocked read when its context is cancelled
// (only a deadline does, and only with ContextTimeoutEnabled), so an XREAD
// BLOCK would hold its subscription for up to BlockTimeout after the
// consumer left. With a client that hands out dedicated connections
// (*goredis.Client), the reader owns one and a cancelled context sends
// CLIENT UNBLOCK for it from the write client: the XREAD returns at once as
// if it had timed out, and the connection stays healthy.
type reader struct {
	t    *Transport
	cmd  goredis.Cmdable
	conn *goredis.Conn // nil: reads share t.sub's pool and cannot be interrupted
	id   int64         // CLIENT ID of conn
}

type connGetter interface{ Conn() *goredis.Conn }

func (t *Transport) openReader(ctx context.Context) (*reader, error) {
	c, ok := t.sub.(connGetter)
	if !ok {
		return &reader{t: t, cmd: t.sub}, nil
	}
	conn := c.Conn()
	id, err := conn.ClientID(ctx).Result()
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return &reader{t: t, cmd: conn, conn: conn, id: id}, nil
}

// close returns the dedicated connection to its pool.
func (r *reader) close() {
	if r.conn != nil {
		_ = r.conn.Close()
	}
}

// xread waits up to BlockTimeout for entries of key after id. Nothing new
// and a cancelled ctx both return no entries and no error.
func (r *reader) xread(ctx context.Context, key, id string, count int64) ([]goredis.XMessage, error) {
	if ctx.Err() != nil {
		return nil, nil
	}
	if r.conn != nil {
		returned := make(chan struct{})
		stop := context.AfterFunc(ctx, func() { r.t.unblock(r.id, returned) })
		defer func() {
			close(returned)
			stop()
		}()
	}
	streams, err := r.cmd.XRead(ctx, &goredis.XReadArgs{
		Streams: []string{key, id},
		Count:   count,
		Block:   r.t.opts.BlockTimeout,
	}).Result()
	if errors.Is(err, goredis.Nil) || (err != nil && ctx.Err() != nil) {
		return nil, nil
	}
	if err != nil || len(streams) == 0 {
		return nil, err
	}
	return streams[0].Messages, nil
}

// unblock interrupts the blocked read of connection id until the read has
// returned. It repeats because CLIENT UNBLOCK can reach Redis before the
// XREAD it is meant for.
func (t *Transport) unblock(id int64, returned <-chan struct{}) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = t.pub.ClientUnblock(ctx, id).Err()
		cancel()
		if !sleep(returned, t.unblockWait) {
			return
		}
	}
}
