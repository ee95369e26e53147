module github.com/breadai/bread/providers/catalog

go 1.26

require (
	github.com/breadai/bread/core v0.0.0
	github.com/breadai/bread/providers/llm v0.0.0
)

replace (
	github.com/breadai/bread/core => ../../core
	github.com/breadai/bread/providers/llm => ../llm
)
