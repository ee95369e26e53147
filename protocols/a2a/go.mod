module github.com/breadai/bread/protocols/a2a

go 1.26.0

require (
	github.com/breadai/bread/core v0.0.0
	github.com/breadai/bread/engine v0.0.0
	github.com/breadai/bread/server v0.0.0-00010101000000-000000000000
	github.com/breadai/bread/stores/postgres v0.0.0
	github.com/breadai/bread/transports/httpstream v0.0.0
	google.golang.org/grpc v1.73.0
)

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/bahlo/generic-list-go v0.2.0 // indirect
	github.com/breadai/bread/stores/internal/bunstore v0.0.0 // indirect
	github.com/breadai/bread/stores/mysql v0.0.0 // indirect
	github.com/breadai/bread/stores/sqlite v0.0.0 // indirect
	github.com/breadai/bread/typed v0.0.0 // indirect
	github.com/buger/jsonparser v1.1.2 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/evanphx/json-patch/v5 v5.9.11 // indirect
	github.com/gabriel-vasile/mimetype v1.4.16 // indirect
	github.com/go-playground/locales v0.14.2 // indirect
	github.com/go-playground/universal-translator v0.18.2 // indirect
	github.com/go-playground/validator/v10 v10.30.6 // indirect
	github.com/go-sql-driver/mysql v1.10.2 // indirect
	github.com/gorilla/mux v1.8.1 // indirect
	github.com/invopop/jsonschema v0.14.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/pgx/v5 v5.12.0 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/jinzhu/inflection v1.0.0 // indirect
	github.com/leodido/go-urn v1.5.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/pb33f/ordered-map/v2 v2.3.1 // indirect
	github.com/puzpuzpuz/xsync/v3 v3.5.1 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/robfig/cron/v3 v3.0.1 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/tmthrgd/go-hex v0.0.0-20190904060850-447a3041c3bc // indirect
	github.com/uptrace/bun v1.3.0 // indirect
	github.com/uptrace/bun/dialect/mysqldialect v1.3.0 // indirect
	github.com/uptrace/bun/dialect/pgdialect v1.3.0 // indirect
	github.com/uptrace/bun/dialect/sqlitedialect v1.3.0 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	go.yaml.in/yaml/v4 v4.0.0-rc.2 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20250715232539-7130f93afb79 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250715232539-7130f93afb79 // indirect
	google.golang.org/protobuf v1.36.6 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
	modernc.org/sqlite v1.62.0 // indirect
)

require (
	github.com/a2aproject/a2a-go v0.3.3
	github.com/breadai/bread/stores/teststores v0.0.0
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)

replace (
	github.com/breadai/bread/core => ../../core
	github.com/breadai/bread/engine => ../../engine
	github.com/breadai/bread/server => ../../server
	github.com/breadai/bread/stores/internal/bunstore => ../../stores/internal/bunstore
	github.com/breadai/bread/stores/mysql => ../../stores/mysql
	github.com/breadai/bread/stores/postgres => ../../stores/postgres
	github.com/breadai/bread/stores/sqlite => ../../stores/sqlite
	github.com/breadai/bread/stores/teststores => ../../stores/teststores
	github.com/breadai/bread/transports/httpstream => ../../transports/httpstream
	github.com/breadai/bread/typed => ../../typed
)
