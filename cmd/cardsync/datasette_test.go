package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cardsync/cardsync/sim"
)

// datasetteDoc is the part of Datasette's metadata the tests read.
type datasetteDoc struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Databases   map[string]struct {
		Description string `json:"description"`
		Tables      map[string]struct {
			Description string            `json:"description"`
			Hidden      bool              `json:"hidden"`
			Columns     map[string]string `json:"columns"`
			Units       map[string]string `json:"units"`
		} `json:"tables"`
	} `json:"databases"`
}

// flatField is one card_fields row that is a column of cards_flat, with
// its minor column and scale when the warehouse has typed fields.
type flatField struct {
	name, column, minor string
	scale               sql.NullInt64
}

// TestDatasetteMetadata: on a warehouse synced from the simulator,
// datasette-metadata writes the same JSON to stdout and to -o FILE (mode
// 0644 at most, no temporary file left, an existing file replaced), keyed
// by the file's stem; every table and column of column_docs is described
// with its text, and every field column of cards_flat (with each decimal
// field's minor column and its scale, once card_fields has them).
func TestDatasetteMetadata(t *testing.T) {
	_, e := newEnv(t, sim.Options{Seed: 25, Cards: 30, ExtraFields: true})
	dir := t.TempDir()
	e.db = filepath.Join(dir, "cardsync-sim.db")
	e.vars["CARDSYNC_WAREHOUSE_PATH"] = e.db
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	code, stdout, errOut := e.run(t.Context(), "datasette-metadata")
	if code != 0 {
		t.Fatalf("datasette-metadata: exit %d\n%s", code, errOut)
	}
	file := filepath.Join(dir, "metadata.json")
	if err := os.WriteFile(file, []byte(`{"title": "old metadata"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := e.run(t.Context(), "datasette-metadata", "-o", file); code != 0 || !strings.Contains(errOut, `database "cardsync-sim"`) {
		t.Fatalf("datasette-metadata -o: exit %d\n%s", code, errOut)
	}
	b, err := os.ReadFile(file)
	if err != nil || string(b) != stdout {
		t.Fatalf("-o %s differs from stdout (%v)", file, err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := e.run(t.Context(), "datasette-metadata", "-o", file); code != 0 {
		t.Fatalf("datasette-metadata -o (new file): exit %d\n%s", code, errOut)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm()&^0o644 != 0 || fi.Mode().Perm()&0o600 != 0o600 {
		t.Errorf("new metadata file mode %v (%v), want 0644 less the umask", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	for _, en := range entries {
		if strings.HasSuffix(en.Name(), ".tmp") {
			t.Errorf("temporary file %s left", en.Name())
		}
	}
	db := openDB(t, e.db)
	checkDatasette(t, stdout, "cardsync-sim", sqliteColumnDocs(t, db), sqliteFlatFields(t, db))
	if _, err := exec.LookPath("datasette"); err == nil {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, "datasette", e.db, "-m", file, "--get", "/cardsync-sim/cards_flat.json").CombinedOutput(); err != nil {
			t.Errorf("datasette with the metadata: %v\n%s", err, out)
		}
	} else {
		t.Log("datasette not installed: the metadata is checked as JSON only")
	}
}

// TestDatasetteMetadataPostgres: a PostgreSQL warehouse's metadata is
// keyed by its database's name, says Datasette does not read it, shows no
// URL, and describes column_docs and cards_flat's fields as a file's does.
func TestDatasetteMetadataPostgres(t *testing.T) {
	dbURL := pgURL(t)
	_, e := newEnv(t, sim.Options{Seed: 26, Cards: 20, ExtraFields: true})
	delete(e.vars, "CARDSYNC_WAREHOUSE_PATH")
	e.vars["CARDSYNC_WAREHOUSE_URL"] = dbURL
	if code, out, errOut := e.run(t.Context(), "backfill"); code != 0 {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	code, stdout, errOut := e.run(t.Context(), "datasette-metadata")
	if code != 0 {
		t.Fatalf("datasette-metadata: exit %d\n%s", code, errOut)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stdout, "postgres://") || strings.Contains(stdout, u.Host) {
		t.Errorf("the metadata shows the warehouse URL:\n%s", stdout)
	}
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	name := strings.TrimPrefix(u.Path, "/")
	doc := checkDatasette(t, stdout, name, pgColumnDocs(t, conn), pgFlatFields(t, conn))
	if d := doc.Databases[name].Description; !strings.Contains(d, "PostgreSQL") || !strings.Contains(d, "Datasette reads only SQLite") {
		t.Errorf("database description %q does not say it is PostgreSQL's", d)
	}
}

// checkDatasette decodes the metadata and checks it describes database
// key alone, with every column_docs row (table → column → description)
// and every field of fields in cards_flat.
func checkDatasette(t *testing.T, out, key string, docs map[string]map[string]string, fields []flatField) datasetteDoc {
	t.Helper()
	var doc datasetteDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("metadata is not JSON: %v\n%s", err, out)
	}
	if _, ok := doc.Databases[key]; !ok || len(doc.Databases) != 1 {
		t.Fatalf("databases %v, want only %q", keys(doc.Databases), key)
	}
	if !strings.Contains(doc.Description, "integer cents (scale 2)") || !strings.Contains(doc.Description, "currency is per card") {
		t.Errorf("description does not say what money is: %q", doc.Description)
	}
	tables := doc.Databases[key].Tables
	for table, cols := range docs {
		if tables[table].Description == "" {
			t.Errorf("table %s has no description", table)
		}
		for col, text := range cols {
			if got := tables[table].Columns[col]; got != text {
				t.Errorf("%s.%s: %q, want column_docs' %q", table, col, got, text)
			}
		}
	}
	if len(docs) < 10 || len(fields) < 8 {
		t.Fatalf("%d tables in column_docs, %d card fields: a fixture too small", len(docs), len(fields))
	}
	flat := tables["cards_flat"].Columns
	minors := 0
	for _, f := range fields {
		if got := flat[f.column]; !strings.Contains(got, `Card field "`+f.name+`"`) {
			t.Errorf("cards_flat.%s: %q, want the card field %q", f.column, got, f.name)
		}
		if f.minor == "" {
			continue
		}
		minors++
		want := "else scale " + strconv.FormatInt(f.scale.Int64, 10) + ", [cards] amount_scale"
		if got := flat[f.minor]; !strings.Contains(got, want) || !strings.Contains(got, "currency is per card, in the currency column") {
			t.Errorf("cards_flat.%s: %q, want %q and where the currency is", f.minor, got, want)
		}
	}
	t.Logf("%d tables, %d field columns, %d minor columns described", len(docs), len(fields), minors)
	return doc
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// sqliteColumnDocs reads column_docs as table → column → description.
func sqliteColumnDocs(t *testing.T, db *sql.DB) map[string]map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT table_name, column_name, description FROM column_docs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var table, col, text string
		if err := rows.Scan(&table, &col, &text); err != nil {
			t.Fatal(err)
		}
		if out[table] == nil {
			out[table] = map[string]string{}
		}
		out[table][col] = text
	}
	return out
}

// sqliteFlatFields reads the fields that are columns of cards_flat, with
// their minor columns when card_fields has minor_column.
func sqliteFlatFields(t *testing.T, db *sql.DB) []flatField {
	t.Helper()
	var typed int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info('card_fields') WHERE name IN ('scale', 'minor_column')`).Scan(&typed); err != nil {
		t.Fatal(err)
	}
	minor := `'', NULL`
	if typed == 2 {
		minor = `coalesce(minor_column, ''), scale`
	}
	rows, err := db.Query(`SELECT name, column_name, ` + minor + ` FROM card_fields WHERE in_flat_view = 1 AND column_name IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []flatField
	for rows.Next() {
		var f flatField
		if err := rows.Scan(&f.name, &f.column, &f.minor, &f.scale); err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// pgColumnDocs reads a PostgreSQL warehouse's column_docs.
func pgColumnDocs(t *testing.T, conn *pgx.Conn) map[string]map[string]string {
	t.Helper()
	rows, err := conn.Query(t.Context(), `SELECT table_name, column_name, description FROM column_docs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var table, col, text string
		if err := rows.Scan(&table, &col, &text); err != nil {
			t.Fatal(err)
		}
		if out[table] == nil {
			out[table] = map[string]string{}
		}
		out[table][col] = text
	}
	return out
}

// pgFlatFields is sqliteFlatFields of a PostgreSQL warehouse.
func pgFlatFields(t *testing.T, conn *pgx.Conn) []flatField {
	t.Helper()
	var typed int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'card_fields' AND column_name IN ('scale', 'minor_column')`).Scan(&typed); err != nil {
		t.Fatal(err)
	}
	minor := `'', NULL::bigint`
	if typed == 2 {
		minor = `coalesce(minor_column, ''), scale::bigint`
	}
	rows, err := conn.Query(t.Context(), `SELECT name, column_name, `+minor+` FROM card_fields WHERE in_flat_view = 1 AND column_name IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []flatField
	for rows.Next() {
		var f flatField
		if err := rows.Scan(&f.name, &f.column, &f.minor, &f.scale); err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}
