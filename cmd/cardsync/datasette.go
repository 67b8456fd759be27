package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/schema"
)

const datasetteUsage = `
Usage: cardsync datasette-metadata [-o FILE] [flags]

Writes Datasette metadata (JSON) for the configured warehouse: the
database, keyed by the name Datasette gives the file (its stem:
cardsync-sim.db is "cardsync-sim"), with a description of every table
and view, each column's meaning and unit from the warehouse's
column_docs, and cards_flat's columns of card fields from its
card_fields: each field's column with its type, and each decimal field's
<field>_minor column in exact minor units at the field's scale (the
currency is per card, in the currency column). Internal tables are
hidden.

It opens the warehouse read-only (while the worker runs, too), needs no
API password and makes no API request. Without -o the JSON goes to
stdout; with -o it is written to a temporary file beside FILE and renamed
over it (mode 0644 less the umask: it holds no secret).

With [warehouse] url the database is keyed by the PostgreSQL database's
name and its description says so: Datasette reads only SQLite files, but
the metadata describes the same tables for tools that read its format.
No URL or password is written.

Examples:
  cardsync datasette-metadata -db ./cardsync-sim.db -o metadata.json && datasette ./cardsync-sim.db -m metadata.json
  cardsync datasette-metadata -config /etc/cardsync/config.toml > /srv/datasette/metadata.json
`

func (m *Main) runDatasette(ctx context.Context, args []string) error {
	flags := m.newFlagSet("datasette-metadata", datasetteUsage)
	var cf commonFlags
	cf.register(flags)
	out := flags.String("o", "", "the JSON file to write (default: stdout)")
	if err := parse(flags, args); err != nil {
		return err
	}
	s, err := m.settings(cf, false)
	if err != nil {
		return err
	}
	// column_docs and card_fields are the whole warehouse's, whichever
	// account the read is scoped to.
	wh, err := openForReading(ctx, s, s.Accounts[0].Name)
	if err != nil {
		return err
	}
	defer wh.Close()
	r, ok := wh.(load.DocsReader)
	if !ok {
		return fmt.Errorf("warehouse %s does not describe itself", wh.Path())
	}
	docs, err := r.WarehouseDocs(ctx)
	if err != nil {
		return err
	}
	b, err := schema.DatasetteFor(docs)
	if err != nil {
		return err
	}
	if *out == "" {
		_, err := m.Stdout.Write(b)
		return err
	}
	if err := writeFileAtomic(*out, b); err != nil {
		return fmt.Errorf("write %s: %w", *out, err)
	}
	fmt.Fprintf(m.Stderr, "datasette-metadata: %s (database %q)\n", *out, schema.DatasetteKey(docs))
	return nil
}

// writeFileAtomic writes b to path through a temporary file beside it and
// a rename, so a reader never sees half a file. A new file is created with
// mode 0644 less the umask (open(2) applies it).
func writeFileAtomic(path string, b []byte) error {
	var suffix [6]byte
	_, _ = rand.Read(suffix[:]) // never fails (crypto/rand)
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+hex.EncodeToString(suffix[:])+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // fails once renamed
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
