package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDatasetteName: the database name is the file's stem as Python's
// pathlib (Datasette) computes it.
func TestDatasetteName(t *testing.T) {
	for in, want := range map[string]string{
		"cardsync-sim.db": "cardsync-sim", "/var/lib/cardsync/warehouse.db": "warehouse", "a.b.sqlite3": "a.b",
		"warehouse": "warehouse", ".hidden": ".hidden", "trailing.": "trailing.", "./x/cardsync-demo.db": "cardsync-demo",
	} {
		if got := DatasetteName(in); got != want {
			t.Errorf("DatasetteName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDatasetteForFields: a typed decimal field gets its minor column at
// its scale with the currency's column named; an untyped warehouse's
// fields are described by their JSON types; column_docs' text wins over
// the binary's; the key is the file's stem or the PostgreSQL database.
func TestDatasetteForFields(t *testing.T) {
	two := 2
	w := WarehouseDocs{Dialect: DialectSQLite, Path: "/tmp/cardsync-sim.db", Typed: true,
		Columns: []ColumnDoc{{Table: "sync_runs", Column: "run_id", Description: "As this warehouse says it."}},
		Fields: []CardField{
			{Name: "balance", Column: "balance", JSONTypes: "string", Type: "decimal", Scale: &two, MinorColumn: "balance_minor"},
			{Name: "currency", Column: "currency", JSONTypes: "string", Type: "text"},
			{Name: "holder", Column: "holder", JSONTypes: "object"},
		}}
	b, err := DatasetteFor(w)
	if err != nil {
		t.Fatal(err)
	}
	var m datasetteMetadata
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	db, ok := m.Databases["cardsync-sim"]
	if !ok || len(m.Databases) != 1 {
		t.Fatalf("databases %s, want cardsync-sim alone", b)
	}
	flat := db.Tables["cards_flat"].Columns
	for col, want := range map[string]string{
		"balance":       "type decimal: exact minor units in balance_minor at the card's scale, cards.amount_scale; without a known currency, 2",
		"balance_minor": "exact minor units at the card's scale (cards.amount_scale: balance × 10^amount_scale as an integer; the card's currency's ISO 4217 minor unit, else scale 2",
		"currency":      "(type text)",
		"holder":        "(JSON types seen: object)",
	} {
		if !strings.Contains(flat[col], want) {
			t.Errorf("cards_flat.%s: %q, want %q", col, flat[col], want)
		}
	}
	if !strings.Contains(flat["balance_minor"], "the currency is per card, in the currency column") {
		t.Errorf("balance_minor does not say where the currency is: %q", flat["balance_minor"])
	}
	if got := db.Tables["sync_runs"].Columns["run_id"]; got != "As this warehouse says it." {
		t.Errorf("sync_runs.run_id: %q, want column_docs' text", got)
	}
	if !db.Tables["card_state"].Hidden || !db.Tables["walk_seen"].Hidden {
		t.Errorf("internal tables not hidden: %s", b)
	}
	w.Fields = w.Fields[:1]
	w.Dialect, w.Database, w.Schema = DialectPostgres, "analytics", "cardsync"
	if b, err = DatasetteFor(w); err != nil {
		t.Fatal(err)
	}
	m = datasetteMetadata{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	pg, ok := m.Databases["analytics"]
	if !ok || !strings.Contains(pg.Description, "database analytics, schema cardsync") {
		t.Errorf("PostgreSQL metadata %s, want keyed analytics and saying so", b)
	}
	if got := pg.Tables["cards_flat"].Columns["balance_minor"]; !strings.Contains(got, "the API sends no currency field") {
		t.Errorf("without a currency field: %q", got)
	}
	if _, err := DatasetteFor(WarehouseDocs{Dialect: "mysql"}); err == nil {
		t.Error("an unknown dialect was rendered")
	}
}
