package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// ColumnDoc is one row of column_docs (Unit "" is NULL).
type ColumnDoc struct {
	Table, Column, Description, Unit string
}

// ColumnDocs returns column_docs as Objects describes it (the columns of
// every public object), in primary key order (table, column).
func ColumnDocs() []ColumnDoc {
	var out []ColumnDoc
	for _, o := range Objects() {
		if o.Internal {
			continue
		}
		for _, c := range o.Columns {
			out = append(out, ColumnDoc{o.Name, c.Name, c.Description, c.Unit})
		}
	}
	slices.SortFunc(out, func(a, b ColumnDoc) int {
		if c := strings.Compare(a.Table, b.Table); c != 0 {
			return c
		}
		return strings.Compare(a.Column, b.Column)
	})
	return out
}

// CardField is one row of a warehouse's card_fields whose field is a
// column of cards_flat.
type CardField struct {
	// Name is the field as sent; Column its cards_flat column.
	Name, Column string
	// JSONTypes is card_fields.json_types.
	JSONTypes string
	// Type, Scale and MinorColumn are card_fields.type, scale and
	// minor_column ("", nil and "" when NULL or when the warehouse does not
	// have them: WarehouseDocs.Typed).
	Type        string
	Scale       *int
	MinorColumn string
}

// WarehouseDocs is what a warehouse says of itself: where it is, its
// column_docs and its card fields. DatasetteFor renders it.
type WarehouseDocs struct {
	Dialect Dialect
	// Path is a SQLite warehouse's file.
	Path string
	// Database and Schema are a PostgreSQL warehouse's database and schema.
	Database, Schema string
	// Columns are the rows of column_docs.
	Columns []ColumnDoc
	// Fields are the card fields that are columns of cards_flat, in
	// card_fields' order.
	Fields []CardField
	// Typed says whether card_fields has type, scale and minor_column
	// (SQLite schema 13, PostgreSQL 10).
	Typed bool
}

type datasetteTable struct {
	Description string            `json:"description,omitempty"`
	Hidden      bool              `json:"hidden,omitempty"`
	Columns     map[string]string `json:"columns,omitempty"`
	Units       map[string]string `json:"units,omitempty"`
}

type datasetteDatabase struct {
	Description string                    `json:"description"`
	Tables      map[string]datasetteTable `json:"tables"`
}

type datasetteMetadata struct {
	Title       string                       `json:"title"`
	Description string                       `json:"description"`
	Databases   map[string]datasetteDatabase `json:"databases"`
}

// datasetteDescription is the metadata's description: what the warehouse
// is and what its money is.
const datasetteDescription = "A local copy of a Card Payment Service account kept by cardsync: cards and their history, account balances, sync runs. " +
	"Times are UTC text. Account amounts (/account) are exact integer cents (scale 2) in *_minor columns and decimal text in the views; " +
	"the API sends no currency for them. Card amounts are the card's JSON text in cards_flat, with exact integer minor units at the card's scale " +
	"(cards.amount_scale: its currency's ISO 4217 minor unit, else [cards] amount_scale) in each decimal field's <field>_minor column; " +
	"the currency is per card, in its currency field. Column meanings are also in the table column_docs."

// DatasetteMetadata renders datasette/metadata.json in Datasette's metadata
// format: a description of every table and view and of each public column,
// units as Pint names where Pint has one, internal tables hidden. It is
// DatasetteFor's rendering of the documentation alone (no card fields),
// keyed by the file names Datasette gives the production warehouse
// (warehouse.db) and the demo's (cardsync-demo.db).
func DatasetteMetadata() ([]byte, error) {
	tables := datasetteTables(Objects(), ColumnDocs())
	m := datasetteMetadata{Title: "cardsync warehouse", Description: datasetteDescription, Databases: map[string]datasetteDatabase{}}
	for _, name := range []string{"warehouse", "cardsync-demo"} {
		m.Databases[name] = datasetteDatabase{Description: "The cardsync warehouse (" + name + ".db).", Tables: tables}
	}
	return encodeDatasette(m)
}

// DatasetteFor renders the Datasette metadata of one warehouse: the
// database keyed by DatasetteKey, each table and view described as
// DatasetteMetadata does but each column by the warehouse's own
// column_docs, and cards_flat's field columns from its card_fields
// (DatasetteFieldColumns). A PostgreSQL warehouse, which Datasette does not
// read, is keyed by its database name and says so.
func DatasetteFor(w WarehouseDocs) ([]byte, error) {
	if w.Dialect != DialectSQLite && w.Dialect != DialectPostgres {
		return nil, fmt.Errorf("datasette metadata: dialect %q: want %q or %q", w.Dialect, DialectSQLite, DialectPostgres)
	}
	tables := datasetteTables(ObjectsIn(w.Dialect), w.Columns)
	flat := tables["cards_flat"]
	for col, text := range DatasetteFieldColumns(w.Fields) {
		if flat.Columns == nil {
			flat.Columns = map[string]string{}
		}
		flat.Columns[col] = text
	}
	tables["cards_flat"] = flat
	desc := "The cardsync warehouse " + filepath.Base(w.Path) + " (SQLite)."
	if w.Dialect == DialectPostgres {
		desc = fmt.Sprintf("The cardsync PostgreSQL warehouse: database %s, schema %s. Datasette reads only SQLite files: "+
			"this metadata is for tools that read Datasette's format.", w.Database, w.Schema)
	}
	m := datasetteMetadata{Title: "cardsync warehouse", Description: datasetteDescription, Databases: map[string]datasetteDatabase{
		DatasetteKey(w): {Description: desc, Tables: tables},
	}}
	return encodeDatasette(m)
}

// DatasetteKey is the name Datasette gives the warehouse's database: a
// SQLite file's stem (DatasetteName), a PostgreSQL warehouse's database.
func DatasetteKey(w WarehouseDocs) string {
	if w.Dialect == DialectPostgres {
		return w.Database
	}
	return DatasetteName(w.Path)
}

// DatasetteName is the name Datasette gives the database in file path: the
// file name's stem as Python's pathlib computes it (cardsync-sim.db →
// cardsync-sim; a name starting with its only dot, or ending in a dot,
// keeps it).
func DatasetteName(path string) string {
	name := filepath.Base(path)
	if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 {
		return name[:i]
	}
	return name
}

// datasetteTables describes every object of objs (internal ones hidden)
// and each column of docs under its table.
func datasetteTables(objs []Object, docs []ColumnDoc) map[string]datasetteTable {
	tables := map[string]datasetteTable{}
	for _, o := range objs {
		t := datasetteTable{Description: o.Description, Hidden: o.Internal}
		if !o.Internal {
			t.Description = "One row per " + o.RowPer + ". " + o.Description
		}
		tables[o.Name] = t
	}
	for _, d := range docs {
		t := tables[d.Table]
		if t.Columns == nil {
			t.Columns = map[string]string{}
		}
		t.Columns[d.Column] = d.Description
		if p := PintUnit(d.Unit); p != "" {
			if t.Units == nil {
				t.Units = map[string]string{}
			}
			t.Units[d.Column] = p
		}
		tables[d.Table] = t
	}
	return tables
}

func encodeDatasette(m datasetteMetadata) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encode datasette metadata: %w", err)
	}
	return b.Bytes(), nil
}

// DatasetteFieldColumns describes cards_flat's columns of fields: each
// field's column as the API's field with its inferred type (or the JSON
// types seen, on a warehouse without typed fields), and each decimal
// field's minor column in exact minor units at the card's scale. Money has
// no Pint unit, so these columns carry no Datasette "units": their
// descriptions say the scale and where the currency is.
func DatasetteFieldColumns(fields []CardField) map[string]string {
	out := map[string]string{}
	currency := "the API sends no currency field, so the currency is not recorded"
	for _, f := range fields {
		if f.Column == "currency" {
			currency = "the currency is per card, in the currency column: sum by currency"
		}
	}
	for _, f := range fields {
		out[f.Column] = fieldText(f)
		if f.MinorColumn == "" {
			continue
		}
		scale := "else [cards] amount_scale (card_fields.scale)"
		if f.Scale != nil {
			scale = fmt.Sprintf("else scale %d, [cards] amount_scale", *f.Scale)
		}
		out[f.MinorColumn] = fmt.Sprintf("Card field %q in exact minor units at the card's scale (cards.amount_scale: %s × 10^amount_scale as an integer; "+
			"the card's currency's ISO 4217 minor unit, %s); a value with more decimals rounded half to even (cards.amounts_rounded), "+
			"NULL when a value does not fit it (counted in card_fields.conflicts). Sum and sort this column, never the text; %s.", f.Name, f.Column, scale, currency)
	}
	return out
}

// fieldText describes the cards_flat column of field f.
func fieldText(f CardField) string {
	text := fmt.Sprintf("Card field %q as the API sends it", f.Name)
	switch {
	case f.Type == "decimal" && f.Scale != nil && f.MinorColumn != "":
		text += fmt.Sprintf(" (type decimal: exact minor units in %s at the card's scale, cards.amount_scale; without a known currency, %d)", f.MinorColumn, *f.Scale)
	case f.Type != "":
		text += " (type " + f.Type + ")"
	case f.JSONTypes != "":
		text += " (JSON types seen: " + f.JSONTypes + ")"
	}
	return text + "; see card_fields."
}
