package mysql

import (
	"context"
	"encoding/json"

	"github.com/uptrace/bun"

	"github.com/breadai/bread/stores/internal/bunstore"
)

// dialect is what MySQL and MariaDB bring to bunstore: their column types,
// a migration lock of their own (their DDL is not transactional), error
// numbers, pos columns, JSON_CONTAINS for tags and LIKE under a
// case-insensitive collation.
type dialect struct{ s *Store }

func (dialect) Name() string { return "mysql store" }

func (dialect) Features() bunstore.Features {
	return bunstore.Features{
		// Like PostgreSQL, a server that commits concurrently: overlapping
		// batches overlap their round trips and flushes.
		Committers: 4,
		// The text columns' collation, utf8mb4_general_ci, ignores case.
		ILike: "LIKE",
		// A backslash in a MySQL string literal escapes the next character.
		LikeEscape: `'\\'`,
	}
}

// Schema is MySQL's spelling of the tables, the same on MySQL 8 and
// MariaDB 10.6+:
//
//   - keys and states are VARBINARY(255), compared byte for byte: a
//     utf8mb4 collation would match "A" to "a" (the _ci ones) or "a" to
//     "a " (MariaDB's PAD SPACE _bin), and an indexed column must be
//     bounded;
//   - payloads and tags are LONGTEXT in utf8mb4_bin, not JSON: MySQL 8's
//     JSON type stores a binary form and returns it reformatted, keys
//     reordered (MariaDB's JSON is LONGTEXT already). The store checks the
//     JSON itself;
//   - other text is LONGTEXT in utf8mb4_general_ci, so LIKE ignores case;
//   - the insertion order and the messages' seq are AUTO_INCREMENT columns,
//     which InnoDB requires to be indexed (UNIQUE), id staying the key;
//   - defaults are expressions in parentheses, which MySQL 8 requires on a
//     TEXT column;
//   - indexes are declared inside CREATE TABLE, since MySQL 8 has no
//     CREATE INDEX IF NOT EXISTS.
func (dialect) Schema() bunstore.Schema {
	const (
		bin  = "LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
		text = "LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
	)
	return bunstore.Schema{
		Types: map[bunstore.Kind]string{
			bunstore.KindID: "VARBINARY(255)", bunstore.KindText: text, bunstore.KindJSON: bin, bunstore.KindTags: bin,
			bunstore.KindInt: "INT", bunstore.KindBigInt: "BIGINT",
		},
		Serial:        func(name string) string { return name + " BIGINT NOT NULL AUTO_INCREMENT UNIQUE" },
		MessageSeq:    "seq BIGINT NOT NULL AUTO_INCREMENT UNIQUE",
		ParenDefaults: true,
		InlineIndexes: true,
	}
}

// InsertionOrder is the pos column.
func (dialect) InsertionOrder(string) string { return "pos" }

// TagConditions match every tag at once with JSON_CONTAINS, which MySQL
// and MariaDB both evaluate on a LONGTEXT holding JSON.
func (dialect) TagConditions(tags map[string]string) []bunstore.Condition {
	if len(tags) == 0 {
		return nil
	}
	raw, err := json.Marshal(tags)
	if err != nil {
		// A map[string]string always encodes; keep the filter closed anyway.
		return []bunstore.Condition{{Query: "FALSE"}}
	}
	return []bunstore.Condition{{Query: "JSON_CONTAINS(tags, ?)", Args: []any{string(raw)}}}
}

// AfterMigrations has nothing to do on MySQL.
func (dialect) AfterMigrations(context.Context, bun.IDB) (func(), error) { return nil, nil }
