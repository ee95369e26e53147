module github.com/breadai/bread/stores/mysql

go 1.26.0

require (
	github.com/go-sql-driver/mysql v1.10.2
	github.com/uptrace/bun v1.3.0
	github.com/uptrace/bun/dialect/mysqldialect v1.3.0
)

require (
	github.com/breadai/bread/core v0.0.0
	github.com/breadai/bread/stores/internal/bunstore v0.0.0
)

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jinzhu/inflection v1.0.0 // indirect
	github.com/puzpuzpuz/xsync/v3 v3.5.1 // indirect
	github.com/tmthrgd/go-hex v0.0.0-20190904060850-447a3041c3bc // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	golang.org/x/mod v0.33.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace (
	github.com/breadai/bread/core => ../../core
	github.com/breadai/bread/stores/internal/bunstore => ../internal/bunstore
)
