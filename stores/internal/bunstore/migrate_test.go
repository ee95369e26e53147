package bunstore

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The history's versions are bun's migration names: same-width digits, in
// order, each once, with a comment of lower-case words.
func TestHistory(t *testing.T) {
	version, comment := regexp.MustCompile(`^[0-9]{4}$`), regexp.MustCompile(`^[a-z0-9_]+$`)
	for i, m := range history {
		if !version.MatchString(m.Version) || !comment.MatchString(m.Comment) || m.Up == nil {
			t.Errorf("migration %d: %q %q: want four digits, lower-case words and an Up", i, m.Version, m.Comment)
		}
		if i > 0 && m.Version <= history[i-1].Version {
			t.Errorf("migration %s comes after %s: versions must increase", m.Version, history[i-1].Version)
		}
	}
}

// Every column a row type of rows.go reads or writes is in its table's
// definition (or is the dialect's seq or pos): the query models and the
// table definitions describe one layout.
func TestRowsMatchTables(t *testing.T) {
	defined := map[string][]string{}
	for _, def := range tables {
		name, cols := bunColumns(reflect.TypeOf(def.model).Elem())
		defined[name] = append(cols, serialColumn, messageSeq)
	}
	for _, row := range []any{
		sessionRow{}, messageRow{}, checkpointRow{}, runRow{}, loopRow{}, loopIterationRow{},
		crumbRow{}, taskRunRow{}, kgNodeRow{}, kgEdgeRow{}, documentRow{}, sessionStateRow{}, runSubscriptionRow{},
	} {
		name, cols := bunColumns(reflect.TypeOf(row))
		have, ok := defined[name]
		if !ok {
			t.Errorf("%T maps to %s, which tables does not define", row, name)
			continue
		}
		for _, c := range cols {
			if !slices.Contains(have, c) {
				t.Errorf("%T has %s.%s, which its table definition lacks", row, name, c)
			}
		}
	}
}

// bunColumns reads a bun model's table name and column names from its tags.
func bunColumns(typ reflect.Type) (table string, cols []string) {
	for f := range typ.Fields() {
		tag := f.Tag.Get("bun")
		if f.Name == "BaseModel" {
			table = strings.TrimPrefix(tag, "table:")
			continue
		}
		if name, _, _ := strings.Cut(tag, ","); name != "" && name != "-" {
			cols = append(cols, name)
		}
	}
	return table, cols
}

// Every kind a table definition uses is one of Kinds, which each dialect
// must type.
func TestTablesUseKnownKinds(t *testing.T) {
	for _, def := range tables {
		typ := reflect.TypeOf(def.model).Elem()
		for f := range typ.Fields() {
			if f.Name == "BaseModel" {
				continue
			}
			if k := Kind(f.Tag.Get("kind")); !slices.Contains(Kinds, k) {
				t.Errorf("%s.%s has kind %q", typ.Name(), f.Name, k)
			}
		}
	}
}
