package vault_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/breadai/bread/core"
	"github.com/breadai/bread/extensions/credentials/vault"
)

func ExampleNew() {
	creds, err := vault.New(vault.Options{
		Address:   "https://vault.internal:8200",  // empty: VAULT_ADDR
		Token:     os.Getenv("BREAD_VAULT_TOKEN"), // empty: VAULT_TOKEN
		Mount:     "kv",                           // default "secret"
		Namespace: "team-a",                       // Vault Enterprise / HCP only
		Timeout:   5 * time.Second,                // default 10s per Get, retries included
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// creds is a core.CredentialProvider: set it as the instance Config's
	// Credentials, or as one tool's CredentialProvider.
	var _ core.CredentialProvider = creds
}

func ExampleProvider_Get() {
	// A stand-in for Vault: `vault kv put -mount=kv SEARCH_API_KEY SEARCH_API_KEY=k-123`.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/kv/data/SEARCH_API_KEY" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"errors":[]}`)
			return
		}
		fmt.Fprint(w, `{"data":{"data":{"SEARCH_API_KEY":"k-123"},"metadata":{"version":1}}}`)
	}))
	defer srv.Close()

	creds, err := vault.New(vault.Options{Address: srv.URL, Token: "s.example", Mount: "kv"})
	if err != nil {
		fmt.Println(err)
		return
	}
	key, err := creds.Get(context.Background(), "SEARCH_API_KEY")
	fmt.Println(key, err)

	_, err = creds.Get(context.Background(), "MISSING")
	var be *core.BreadError
	if errors.As(err, &be) {
		fmt.Println(be.Code, be.Context["reason"])
	}
	// Output:
	// k-123 <nil>
	// CREDENTIAL_UNAVAILABLE secret_not_found
}
