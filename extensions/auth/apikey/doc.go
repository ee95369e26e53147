// Package apikey is API-key auth for bread: Strategy checks the key an
// incoming request presents, for the server (server.Options.Auth or
// server.AuthPlugin); Signer attaches a key to outgoing requests, for remote
// agents. Both take the same Options.
//
// Keys are compared in constant time over every configured key, through
// their SHA-256 digests, so neither the key's length nor which key matched
// shows in the response time.
package apikey
