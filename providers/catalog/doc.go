// Package catalog is the provider registry of providers/llm plus what a
// person needs to set each provider up: its display name, the environment
// variables it reads, its default endpoint, its documentation and its API
// family. `bread provider list` prints it.
package catalog
