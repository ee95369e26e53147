// Package core is the domain of bread: crumbs (the typed events a run emits),
// the ports every adapter implements (BreadStore, BreadTransport, LanguageModel,
// BreadPlugin, auth, credentials, blobs, remote agents), and the Instance that
// runs agents and sends every crumb through one per-run choke point.
//
// The choke point numbers each crumb (seq), appends it to the store's durable
// crumb log, hands it to in-process listeners and publishes it on the
// transport. The store is truth; the transport is liveness.
//
// core imports no adapter. Stores, transports, providers and plugins live in
// their own modules and are handed to New through Config, so a program links
// only what it uses and a third party can write an adapter against core alone.
// Conformance suites for adapters live in core/storetest and
// core/transporttest; a scripted model for tests lives in core/modeltest.
package core
