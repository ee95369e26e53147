package cli_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestIdleConnectionsAreClosed: `dev` used to serve with no idle timeout,
// so a keep-alive connection could be held open forever. Both `start` and
// `dev` now close a keep-alive connection idle past server.timeouts.idle.
func TestIdleConnectionsAreClosed(t *testing.T) {
	for _, command := range []string{"start", "dev"} {
		t.Run(command, func(t *testing.T) {
			dir := helloWorld(t, "server: {timeouts: {idle: 1s}}")
			port := freePort(t)
			base := "http://127.0.0.1:" + strconv.Itoa(port)
			logs := &syncWriter{w: &bytes.Buffer{}}
			cmd := exec.Command(binary, command, "--cwd", dir)
			cmd.Env = append(os.Environ(), "BREAD_PORT="+strconv.Itoa(port), "BREAD_HOST=127.0.0.1")
			cmd.Stdout, cmd.Stderr = io.Discard, logs
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				if t.Failed() {
					t.Logf("bread %s logs:\n%s", command, logs.String())
				}
			})
			waitHTTP(t, base+"/healthz")

			conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || res.Close {
				t.Fatalf("first request: %d, close %v", res.StatusCode, res.Close)
			}
			// The deadline only bounds the test; the server, not it, must
			// end the connection.
			_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
				t.Fatalf("idle keep-alive connection: %v, want the server to close it (EOF)", err)
			}
		})
	}
}
