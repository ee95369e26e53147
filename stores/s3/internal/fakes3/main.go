// Command fakes3 serves an in-memory S3-compatible API over HTTP, for the
// store's tests: .ci/run builds it, starts it on loopback and points
// BREAD_TEST_S3_URL at it. It keeps everything in memory and checks no
// signature; it is a test double, never a place to keep data.
package main

import (
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9324", "loopback address to listen on")
	flag.Parse()
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		log.Fatal(err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		log.Fatalf("fakes3 listens on loopback only, not %s", host)
	}
	faker := gofakes3.New(s3mem.New(), gofakes3.WithAutoBucket(false))
	srv := &http.Server{Addr: *addr, Handler: faker.Server(), ReadHeaderTimeout: 10 * time.Second}
	log.Printf("fakes3 listening on http://%s", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
