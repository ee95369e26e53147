package streamtest_test

import (
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/transports/httpstream/streamtest"
)

// mounter adds two routes and ignores the Runtime.
type mounter struct{}

func (mounter) Mount(r core.Router, _ core.Runtime) {
	r.Handle("thing.read", "GET", "/things/{id}", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.WriteString(w, req.Header.Get("X-Trail")+req.PathValue("id"))
	}))
	r.Handle("", "*", "/any", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.WriteString(w, req.Method)
	}))
}

func trail(tag string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Set("X-Trail", r.Header.Get("X-Trail")+tag)
			next.ServeHTTP(w, r)
		})
	}
}

func do(t *testing.T, method, url string) string {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return strconv.Itoa(res.StatusCode) + " " + string(b)
}

func TestServeMountsWithPathValuesMethodsAndMiddleware(t *testing.T) {
	ts := streamtest.Serve(t, mounter{}, nil, trail("a"), trail("b"))
	if got := do(t, "GET", ts.URL+"/things/42"); got != "200 ab42" {
		t.Fatalf("GET /things/42 = %q (middleware order a, b)", got)
	}
	if got := do(t, "POST", ts.URL+"/things/42"); got[:3] != "405" {
		t.Fatalf("POST /things/42 = %q", got)
	}
	if got := do(t, "DELETE", ts.URL+"/any"); got != "200 DELETE" {
		t.Fatalf("DELETE /any = %q", got)
	}
}

func TestRouterRecordsActions(t *testing.T) {
	r := streamtest.NewRouter()
	mounter{}.Mount(r, nil)
	if a := r.Actions(); a["GET /things/{id}"] != "thing.read" || a["/any"] != "" || len(a) != 2 {
		t.Fatalf("actions %v", a)
	}
}
