// Package vault is a bread credential provider that reads secrets from a
// HashiCorp Vault KV v2 mount through HashiCorp's official client,
// github.com/hashicorp/vault/api.
//
// A credential named NAME is the key NAME of the secret at {mount}/data/NAME
// (GET /v1/{mount}/data/NAME, read with api.KVv2(mount).Get): one Vault
// secret per credential, holding one key of the same name, as
// `vault kv put -mount=secret SEARCH_API_KEY SEARCH_API_KEY=...` writes it.
// Names and the mount are letters, digits, '_' or '-', starting with a
// letter, so nothing can steer the request to another path.
//
//	creds, err := vault.New(vault.Options{
//		Address: "https://vault.internal:8200",
//		Token:   os.Getenv("VAULT_TOKEN"),
//		Mount:   "kv",
//	})
//	// creds is a core.CredentialProvider: the instance's Config.Credentials,
//	// or one tool's CredentialProvider.
//
// Empty Address, Token and Namespace fall back to VAULT_ADDR (or
// VAULT_AGENT_ADDR), VAULT_TOKEN and VAULT_NAMESPACE, as the official client
// reads them; the client's other VAULT_* variables (TLS, proxy, rate limit,
// headers) apply as well, except VAULT_MAX_RETRIES and VAULT_CLIENT_TIMEOUT,
// which Options set explicitly. A caller that already holds an *api.Client
// passes it as Options.Client.
//
// Errors are *core.BreadError: INVALID_VAULT_MOUNT and INVALID_CONFIG from
// New, INVALID_CREDENTIAL_NAME for a malformed name, RUN_CANCELLED when the
// caller's context ends, and CREDENTIAL_UNAVAILABLE for everything else,
// with Context["reason"] saying which (see the Reason constants). The token
// never appears in an error, and nothing is cached.
package vault
