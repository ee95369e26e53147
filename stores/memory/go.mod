module github.com/breadai/bread/stores/memory

go 1.26

require github.com/breadai/bread/core v0.0.0

replace github.com/breadai/bread/core => ../../core
