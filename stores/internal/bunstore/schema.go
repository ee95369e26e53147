package bunstore

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/uptrace/bun"
)

// Schema is how a dialect spells what the portable table definitions
// (tables.go) leave open. Each field is one named difference between
// engines; everything else is bun's, from the models.
type Schema struct {
	// Types is the SQL type of every Kind.
	Types map[Kind]string

	// Serial is the definition of a column named name that the database
	// numbers in insertion order, added to the tables that keep one (see
	// Dialect.InsertionOrder). Nil when the engine numbers rows itself
	// (SQLite's rowid).
	Serial func(name string) string

	// MessageSeq defines bread_session_messages.seq, the order of a
	// conversation. When it declares PRIMARY KEY, id is UNIQUE; otherwise
	// id is the primary key.
	MessageSeq string

	// ParenDefaults writes every column default as an expression in
	// parentheses, the only form MySQL 8 accepts on a TEXT column.
	ParenDefaults bool

	// InlineIndexes declares the indexes inside CREATE TABLE, for an engine
	// without CREATE INDEX IF NOT EXISTS (MySQL); otherwise each is a
	// CREATE INDEX IF NOT EXISTS of its own, which also indexes a table an
	// earlier release created without it.
	InlineIndexes bool

	// Extra are statements run after the tables and indexes exist (an
	// index only one engine has), each idempotent.
	Extra []string

	// Columns returns the columns table has, or none when it does not
	// exist: the baseline adds the ones a table of an earlier release
	// lacks.
	Columns func(ctx context.Context, db bun.IDB, table string) (map[string]bool, error)
}

// serialColumn is the name of the insertion-order column Schema.Serial
// adds.
const serialColumn = "pos"

// applyTypes gives the columns of every table model the SQL type its kind
// has in schema. bun reads a column's CREATE TABLE type from
// CreateTableSQLType, which dialects themselves set when bun discovers a
// model; the models here are only ever created, so this changes no query.
// db's dialect keeps its own table cache, so each Store sets its own.
func applyTypes(db *bun.DB, schema Schema) error {
	for _, t := range tables {
		table := db.Table(reflect.TypeOf(t.model).Elem())
		for _, f := range table.Fields {
			kind := Kind(f.StructField.Tag.Get("kind"))
			typ, ok := schema.Types[kind]
			if !ok {
				return fmt.Errorf("%s.%s: the dialect has no type for kind %q", table.Name, f.Name, kind)
			}
			f.CreateTableSQLType = typ
			if schema.ParenDefaults && f.SQLDefault != "" && !strings.HasPrefix(f.SQLDefault, "(") {
				f.SQLDefault = "(" + f.SQLDefault + ")"
			}
		}
	}
	return nil
}

// createTables creates the bread_* tables and indexes that do not exist
// yet, adds the columns a table of an earlier release lacks, and runs
// schema.Extra.
func createTables(ctx context.Context, db bun.IDB, schema Schema) error {
	for _, t := range tables {
		q := db.NewCreateTable().Model(t.model).IfNotExists()
		if t.ordered && schema.Serial != nil {
			q = q.ColumnExpr(schema.Serial(serialColumn))
		}
		if t.model == (*messagesTable)(nil) {
			q = q.ColumnExpr(schema.MessageSeq)
			if strings.Contains(schema.MessageSeq, "PRIMARY KEY") {
				q = q.ColumnExpr("UNIQUE (id)")
			} else {
				q = q.ColumnExpr("PRIMARY KEY (id)")
			}
		}
		for _, fk := range t.foreignKeys {
			q = q.ForeignKey(fk)
		}
		if schema.InlineIndexes {
			for _, ix := range t.indexes {
				q = q.ColumnExpr("INDEX " + ix.name + " (" + ix.columnList(schema) + ")")
			}
		}
		if _, err := q.Exec(ctx); err != nil {
			return fmt.Errorf("create %s: %w", tableName(db, t), err)
		}
		if err := addMissingColumns(ctx, db, schema, t); err != nil {
			return err
		}
		if schema.InlineIndexes {
			continue
		}
		for _, ix := range t.indexes {
			stmt := "CREATE INDEX IF NOT EXISTS " + ix.name + " ON " + tableName(db, t) + " (" + ix.columnList(schema) + ")"
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("create index %s: %w", ix.name, err)
			}
		}
	}
	for _, stmt := range schema.Extra {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

func (ix indexDef) columnList(schema Schema) string {
	if ix.ordered && schema.Serial != nil {
		return ix.columns + ", " + serialColumn
	}
	return ix.columns
}

func tableName(db bun.IDB, t tableDef) string {
	return db.Dialect().Tables().Get(reflect.TypeOf(t.model).Elem()).Name
}

// addMissingColumns adds the columns of t that its table, created by an
// earlier release (or by the TypeScript bread), lacks. An added column is
// nullable unless it has a default, whatever the model says: the rows
// already there have no value for it.
func addMissingColumns(ctx context.Context, db bun.IDB, schema Schema, t tableDef) error {
	if schema.Columns == nil {
		return nil
	}
	table := db.Dialect().Tables().Get(reflect.TypeOf(t.model).Elem())
	have, err := schema.Columns(ctx, db, table.Name)
	if err != nil {
		return fmt.Errorf("read the columns of %s: %w", table.Name, err)
	}
	var add []string
	for _, f := range table.Fields {
		if have[f.Name] {
			continue
		}
		def := f.Name + " " + f.CreateTableSQLType
		if f.SQLDefault != "" {
			def += " NOT NULL DEFAULT " + f.SQLDefault
		}
		add = append(add, def)
	}
	if t.ordered && schema.Serial != nil && !have[serialColumn] {
		add = append(add, schema.Serial(serialColumn))
	}
	if t.model == (*messagesTable)(nil) && !have[messageSeq] {
		add = append(add, schema.MessageSeq)
	}
	for _, def := range add {
		if _, err := db.ExecContext(ctx, "ALTER TABLE "+table.Name+" ADD COLUMN "+def); err != nil {
			return fmt.Errorf("add %s.%s: %w", table.Name, strings.Fields(def)[0], err)
		}
	}
	return nil
}
