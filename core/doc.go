// Package core is the domain of bread and the contract its adapters
// implement: crumbs (the typed events a run emits), BreadError and its
// codes, the ports (BreadStore and its optional parts, the BreadBus,
// JobQueue, LanguageModel, BlobStore, BreadPlugin and its optional parts,
// auth, credentials, deciders, remote agents), the portable types over them
// that everything above the ports calls (Storage, Bus, Queue, Blobs), the
// Runtime view of the engine that ports receive, and the declarative
// configuration types (Agent, Tool, Permissions, Hooks, PipelineStep, ...).
//
// core depends on the standard library and google/uuid only, so a third
// party can write a store, a bus, a model provider or a plugin against it
// alone and prove it with the conformance suites in core/storetest,
// core/transporttest, core/blobtest and core/lmtest. To run agents, use
// package engine; to define agents and tools from Go types, package typed.
package core
