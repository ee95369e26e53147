package remoteagent

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestEventReader(t *testing.T) {
	in := "retry: 3000\r\n\r\n: ping\n\nid: 7\ndata: {\"a\":\ndata:1}\n\nid\ndata\n\nevent: x\rdata: last\r\r"
	er := newEventReader(bytes.NewReader([]byte(in)), 1024)
	want := []event{{id: "7", hasID: true, data: []byte("{\"a\":\n1}")}, {id: "", hasID: true, data: []byte("")}, {data: []byte("last")}}
	for _, w := range want {
		ev, err := er.next()
		if err != nil || ev.id != w.id || ev.hasID != w.hasID || string(ev.data) != string(w.data) {
			t.Fatalf("event %+v %v, want %+v", ev, err, w)
		}
	}
	if _, err := er.next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

// FuzzEventReader: the SSE parser never panics and never yields an event
// over its limit.
func FuzzEventReader(f *testing.F) {
	f.Add([]byte("id: 1\ndata: {\"type\":\"x\"}\n\n"))
	f.Add([]byte("retry: 3000\r\n\r\n: ping\r\r"))
	f.Add([]byte("data\ndata:\ndata: a\n\n\n"))
	f.Add([]byte("\xff\x00id: \x00\ndata: \x00\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		er := newEventReader(bytes.NewReader(data), 256)
		for range 1000 {
			ev, err := er.next()
			if err != nil {
				if !errors.Is(err, io.EOF) && err.Error() == "" {
					t.Fatal("an error without text")
				}
				return
			}
			if len(ev.data) > 256 {
				t.Fatalf("event of %d bytes over the limit", len(ev.data))
			}
			_, _, _ = decodeEvent(ev)
		}
	})
}
