package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cardsync/cardsync/schema"
)

// columnDoc is one row of column_docs (Unit "" is NULL).
type columnDoc struct {
	Table, Column, Description, Unit string
}

// docKey names a documented relation (Column "") or one of its columns.
type docKey struct{ Table, Column string }

// catalog is what the database has of the documented objects: each
// relation's kind ('r' table, 'v' view, ...) under its docKey with Column
// "", each column's under its own, and every one's comment ("" none).
type catalog struct {
	kind    map[string]string
	comment map[docKey]string
	exists  map[docKey]bool
}

// postgresObjects is schema.ObjectsIn(DialectPostgres): the documentation
// in PostgreSQL's words (timestamptz, numeric(21,2), bigint cents, jsonb).
func postgresObjects() []schema.Object { return schema.ObjectsIn(schema.DialectPostgres) }

// readCatalog reads the kind and comment of every documented relation of
// the current schema and of each of its columns.
func readCatalog(ctx context.Context, q rowsQuerier) (catalog, error) {
	var names []string
	for _, o := range postgresObjects() {
		names = append(names, o.Name)
	}
	rows, err := q.Query(ctx, `
		SELECT c.relname, '', c.relkind::text, coalesce(obj_description(c.oid, 'pg_class'), '')
		FROM pg_class c
		WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND c.relname = ANY($1)
		UNION ALL
		SELECT c.relname, a.attname, c.relkind::text, coalesce(col_description(c.oid, a.attnum), '')
		FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) AND c.relname = ANY($1)`, names)
	if err != nil {
		return catalog{}, err
	}
	cat := catalog{kind: map[string]string{}, comment: map[docKey]string{}, exists: map[docKey]bool{}}
	var k docKey
	var kind, comment string
	_, err = pgx.ForEachRow(rows, []any{&k.Table, &k.Column, &kind, &comment}, func() error {
		cat.kind[k.Table] = kind
		cat.comment[k] = comment
		cat.exists[k] = true
		return nil
	})
	return cat, err
}

// columnDocs is column_docs as this binary describes it, in PostgreSQL's
// words, for the documented columns the database has, in primary key order.
func columnDocs(cat catalog) []columnDoc {
	var out []columnDoc
	for _, o := range postgresObjects() {
		if o.Internal {
			continue
		}
		for _, c := range o.Columns {
			if cat.exists[docKey{o.Name, c.Name}] {
				out = append(out, columnDoc{o.Name, c.Name, c.Description, c.Unit})
			}
		}
	}
	slices.SortFunc(out, func(a, b columnDoc) int {
		return cmp.Or(strings.Compare(a.Table, b.Table), strings.Compare(a.Column, b.Column))
	})
	return out
}

// objectComment is the COMMENT of a documented table or view: what the
// docs/schema.md's table says of it.
func objectComment(o schema.Object) string {
	if o.Internal {
		return o.Description
	}
	text := "One row per " + o.RowPer + ". " + o.Description
	if o.Generated != "" {
		text += " Besides the documented columns: " + o.Generated + "."
	}
	return text
}

// comments are the COMMENTs this binary gives the documented objects the
// database has (the relation under Column ""), from the same text as
// column_docs. cards_flat's field columns get none: they come and go with
// card_fields (whose rows say what each is), and a comment per field would
// be rewritten at every re-creation of the view.
func comments(cat catalog) map[docKey]string {
	out := map[docKey]string{}
	for _, o := range postgresObjects() {
		if !cat.exists[docKey{o.Name, ""}] {
			continue
		}
		out[docKey{o.Name, ""}] = objectComment(o)
		for _, c := range o.Columns {
			if k := (docKey{o.Name, c.Name}); cat.exists[k] {
				out[k] = c.Description
			}
		}
	}
	return out
}

// commentSQL is the COMMENT statement that gives k the text (the object's
// kind from the catalog: COMMENT ON TABLE refuses a view). Identifiers and
// the literal are quoted here (COMMENT takes no parameters); the caller
// runs it with standard_conforming_strings on.
func commentSQL(k docKey, kind, text string) string {
	literal := "'" + strings.ReplaceAll(text, "'", "''") + "'"
	if k.Column != "" {
		return "COMMENT ON COLUMN " + pgx.Identifier{k.Table, k.Column}.Sanitize() + " IS " + literal
	}
	what := "TABLE"
	switch kind {
	case "v":
		what = "VIEW"
	case "m":
		what = "MATERIALIZED VIEW"
	}
	return "COMMENT ON " + what + " " + pgx.Identifier{k.Table}.Sanitize() + " IS " + literal
}

// staleComments returns the COMMENT statements that would bring the
// database's comments in line with want, in a fixed order.
func staleComments(cat catalog, want map[docKey]string) []string {
	var out []string
	for _, k := range slices.SortedFunc(maps.Keys(want), func(a, b docKey) int {
		return cmp.Or(strings.Compare(a.Table, b.Table), strings.Compare(a.Column, b.Column))
	}) {
		if cat.comment[k] != want[k] {
			out = append(out, commentSQL(k, cat.kind[k.Table], want[k]))
		}
	}
	return out
}

// flatComments are the statements that comment cards_flat and its fixed
// columns again after syncFlat dropped and re-created it (a DROP takes the
// comments with it; CREATE OR REPLACE keeps them).
func flatComments() string {
	var b strings.Builder
	for _, o := range postgresObjects() {
		if o.Name != "cards_flat" {
			continue
		}
		b.WriteString(commentSQL(docKey{o.Name, ""}, "v", objectComment(o)) + ";\n")
		for _, c := range o.Columns {
			b.WriteString(commentSQL(docKey{o.Name, c.Name}, "v", c.Description) + ";\n")
		}
	}
	return b.String()
}

// storedColumnDocs reads column_docs in columnDocs' order.
func storedColumnDocs(ctx context.Context, q rowsQuerier) ([]columnDoc, error) {
	rows, err := q.Query(ctx, `SELECT table_name, column_name, description, coalesce(unit, '')
		FROM column_docs ORDER BY table_name COLLATE "C", column_name COLLATE "C"`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (columnDoc, error) {
		var d columnDoc
		err := r.Scan(&d.Table, &d.Column, &d.Description, &d.Unit)
		return d, err
	})
}

// docsState is what refreshColumnDocs compares: the documentation the
// database should hold and what it holds.
type docsState struct {
	want, got []columnDoc
	comments  []string // the COMMENT statements still to run
}

func (s docsState) current() bool { return slices.Equal(s.got, s.want) && len(s.comments) == 0 }

// readDocs reads column_docs and the documented objects' comments.
func readDocs(ctx context.Context, q rowsQuerier) (docsState, error) {
	cat, err := readCatalog(ctx, q)
	if err != nil {
		return docsState{}, fmt.Errorf("read the catalog: %w", err)
	}
	got, err := storedColumnDocs(ctx, q)
	if err != nil {
		return docsState{}, fmt.Errorf("read column_docs: %w", err)
	}
	return docsState{want: columnDocs(cat), got: got, comments: staleComments(cat, comments(cat))}, nil
}

// refreshColumnDocs brings column_docs and the COMMENTs of the documented
// tables, views and columns in line with this binary's documentation. An
// up-to-date database costs two reads; otherwise they are rewritten in one
// transaction under docsLock, after reading them again there, so that
// replicas opening together (or binaries of two versions) write one after
// the other. COMMENT needs the objects' owner: a role that is not gets a
// warning and column_docs alone (so does a COMMENT kept waiting by a lock).
// A read-only warehouse writes nothing.
func (w *Warehouse) refreshColumnDocs(ctx context.Context) error {
	if w.readOnly {
		return nil
	}
	if s, err := readDocs(ctx, w.pool); err != nil || s.current() {
		return err
	}
	var rows, commented int
	err := pgx.BeginFunc(ctx, w.pool, func(tx pgx.Tx) error {
		if err := advisoryLock(ctx, tx, docsLock, peerLockTimeout, "column_docs' lock (another replica is filling it)"); err != nil {
			return err
		}
		s, err := readDocs(ctx, tx)
		if err != nil || s.current() {
			return err
		}
		if !slices.Equal(s.got, s.want) {
			if err := writeColumnDocs(ctx, tx, s.want); err != nil {
				return err
			}
			rows = len(s.want)
		}
		if len(s.comments) == 0 {
			return nil
		}
		// In a savepoint: a COMMENT refused (the role does not own the
		// object) or kept waiting (it takes a SHARE UPDATE EXCLUSIVE lock,
		// which a VACUUM or an index build holds) costs the comments, not
		// column_docs or the open; the next open tries again.
		err = pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
			_, err := sp.Exec(ctx, "SET LOCAL standard_conforming_strings = on;\nSET LOCAL lock_timeout = '5s';\n"+strings.Join(s.comments, ";\n"))
			return err
		})
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && (pgErr.Code == "42501" || pgErr.Code == "55P03") { // insufficient_privilege, lock_not_available
			w.log.Warn("COMMENTs of the warehouse's tables and views not written; column_docs has the text", "err", err)
			return nil
		}
		commented = len(s.comments)
		return err
	})
	if err != nil {
		return fmt.Errorf("fill column_docs: %w", err)
	}
	if rows > 0 {
		w.log.Info("column_docs refreshed", "rows", rows)
	}
	if commented > 0 {
		w.log.Info("comments refreshed", "comments", commented)
	}
	return nil
}

// writeColumnDocs replaces column_docs' rows by want.
func writeColumnDocs(ctx context.Context, tx pgx.Tx, want []columnDoc) error {
	var tables, columns, descriptions, units []string
	for _, d := range want {
		tables, columns = append(tables, d.Table), append(columns, d.Column)
		descriptions, units = append(descriptions, d.Description), append(units, d.Unit)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM column_docs`); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO column_docs (table_name, column_name, description, unit)
		SELECT t, c, d, nullif(u, '') FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS x(t, c, d, u)`,
		tables, columns, descriptions, units)
	return err
}
