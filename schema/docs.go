package schema

import (
	"bytes"
	_ "embed" // docs.json
	"encoding/json"
	"fmt"
)

//go:generate go run ./gendocs -root ..

// Kind says whether an object is a table or a view.
type Kind string

// The kinds of schema objects.
const (
	KindTable Kind = "table"
	KindView  Kind = "view"
)

// Units of Column.Unit. They are words for people (column_docs,
// docs/schema.md); PintUnit gives the Pint name Datasette understands, when there
// is one.
const (
	UnitCents        = "cents"
	UnitCurrency     = "currency units"
	UnitSeconds      = "seconds"
	UnitMilliseconds = "milliseconds"
	UnitBytes        = "bytes"
)

// PintUnit returns the Pint unit name of a Column.Unit (Datasette's
// metadata "units"), or "" when Pint has none (money has no Pint unit).
func PintUnit(unit string) string {
	switch unit {
	case UnitSeconds:
		return "second"
	case UnitMilliseconds:
		return "millisecond"
	case UnitBytes:
		return "byte"
	}
	return ""
}

// Object documents one table or view of the warehouse.
type Object struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// RowPer completes "one row per ...".
	RowPer string `json:"row_per"`
	// Description says what the object is for.
	Description string `json:"description"`
	// Internal objects are not for analysts: their columns are not
	// documented, Datasette hides them, and column_docs has no rows for them.
	Internal bool `json:"internal"`
	// Generated, when set, says what further columns the object has beyond
	// Columns (cards_flat: one per card field, listed in card_fields).
	Generated string   `json:"generated"`
	Columns   []Column `json:"columns"`
}

// Column documents one column of a public object.
type Column struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Unit is one of the Unit constants, or "" (text, times, identifiers,
	// counts, flags).
	Unit string `json:"unit"`
	// Example is a typical value as SQL shows it ("" when none helps).
	Example string `json:"example"`
	// Forms are the names of the storage forms (Forms) the description
	// names, in order: what the column is in each dialect.
	Forms []string `json:"-"`
}

// docsJSON is docs.json: every object of Objects, in order, as data. An
// object with account_of gets the account column last (see Objects).
//
//go:embed docs.json
var docsJSON []byte

// objectDoc is one object of docs.json.
type objectDoc struct {
	Object
	// AccountOf, when set, says what the object's account column belongs
	// to ("the card"): the column is added by Objects, the same text for
	// every object.
	AccountOf string `json:"account_of"`
	// Only, when set, names the one dialect that has the object
	// (sync_leases, sync_replicas and schema_migrations are PostgreSQL's).
	Only Dialect `json:"only"`
}

// Objects returns the documentation of every table and view of the
// warehouse at the latest schema version, public ones first, in the order
// docs/schema.md lists them, in SQLite's words (ObjectsIn(DialectSQLite)).
// It is the one source of SQLite's column_docs, docs/schema.md and
// datasette/metadata.json; a test compares it with the migrated schema.
// Each call returns a new slice.
func Objects() []Object { return ObjectsIn(DialectSQLite) }

// ObjectsIn returns the documentation of Objects as dialect d stores it:
// the same objects, columns, units and meanings, with each storage form
// ({time}, {decimal}, ...) in d's words (timestamptz, numeric(21,2) in
// PostgreSQL). Each call returns a new slice.
//
// The documentation is docs.json, embedded at build time: like a
// regexp.MustCompile of a constant, a file that does not decode is a
// mistake of the build, which panics here (TestObjectsWellFormed catches it
// first).
func ObjectsIn(d Dialect) []Object {
	objects, err := decodeObjects(docsJSON, d)
	if err != nil {
		panic(fmt.Sprintf("schema: docs.json: %v", err))
	}
	return objects
}

// accountText is the description of the account column of an object with
// account_of (the schema 5 upgrade that added it is SQLite's alone).
func accountText(of string) string {
	text := "The API account " + of + " belongs to{ (schema 5)|}: 'default' for a single account (the config's [api] table)" +
		"{ and for every row stored before|}; otherwise the name of its [[accounts]] table."
	if of == "the card" {
		text += " A card id is unique within its account."
	}
	return text
}

// decodeObjects reads docs.json strictly (unknown keys are an error),
// appends the account column where an object has one and puts every text
// in dialect d's words.
func decodeObjects(b []byte, d Dialect) ([]Object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var docs []objectDoc
	if err := dec.Decode(&docs); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	objects := make([]Object, 0, len(docs))
	for _, doc := range docs {
		if doc.Only != "" && doc.Only != DialectSQLite && doc.Only != DialectPostgres {
			return nil, fmt.Errorf("%s: only %q: want %q or %q", doc.Name, doc.Only, DialectSQLite, DialectPostgres)
		}
		if doc.Only != "" && doc.Only != d {
			continue
		}
		o := doc.Object
		if doc.AccountOf != "" {
			o.Columns = append(o.Columns, Column{Name: "account", Description: accountText(doc.AccountOf), Example: "default"})
		}
		for j := range o.Columns {
			o.Columns[j].Forms = formsOf(o.Columns[j].Description)
		}
		obj, err := expandObject(o, d)
		if err != nil {
			return nil, err
		}
		objects = append(objects, obj)
	}
	return objects, nil
}
