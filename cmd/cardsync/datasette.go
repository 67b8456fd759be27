package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
API password and makes no API request. Without -o, or with -o -, the
JSON goes to stdout; with -o FILE it is written to a temporary file
beside FILE and renamed over it: a new FILE gets mode 0644 less the
umask (it holds no secret), a replaced one keeps its mode. It refuses
(exit 2) a FILE that is the warehouse, its -wal, -shm or -journal file
or one of its lock files, anything not a regular file, and an existing file that is neither
empty nor JSON (a database, a WAL, a lock or a config file is kept).

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
	out := flags.String("o", "", "the JSON file to write (default, or -: stdout)")
	if err := parse(flags, args); err != nil {
		return err
	}
	s, err := m.settings(cf, false)
	if err != nil {
		return err
	}
	if *out == "-" {
		*out = ""
	}
	if *out != "" {
		db := s.DBPath
		if s.WarehouseURL != "" {
			db = ""
		}
		if err := checkMetadataOut(*out, db); err != nil {
			return err
		}
	}
	// column_docs and card_fields are the whole warehouse's, whichever
	// account the read is scoped to.
	wh, err := openForReading(ctx, s, s.Accounts[0].Name)
	if err != nil {
		return err
	}
	defer wh.Close()
	docs, err := wh.WarehouseDocs(ctx)
	if err != nil {
		return err
	}
	b, err := schema.DatasetteFor(docs)
	if err != nil {
		return err
	}
	if *out == "" { // no -o, or -o -
		_, err := m.Stdout.Write(b)
		return err
	}
	if err := writeFileAtomic(*out, b); err != nil {
		return fmt.Errorf("write %s: %w", *out, err)
	}
	fmt.Fprintf(m.Stderr, "datasette-metadata: %s (database %q)\n", *out, schema.DatasetteKey(docs))
	return nil
}

// checkMetadataOut refuses an -o FILE whose replacement would lose data:
// the SQLite warehouse db ("" for none) or its -wal, -shm, -journal or
// lock files (isLockOf), under any spelling of the path; an existing file that is not a
// regular file (a directory, a device...) or that holds anything but a
// JSON object (holdsJSON).
func checkMetadataOut(out, db string) error {
	if db != "" {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal", ".lock"} {
			if samePath(out, db+suffix) {
				return &usageError{msg: fmt.Sprintf("-o %s: refusing to replace the warehouse file %s; choose another file", out, db+suffix)}
			}
		}
		if isLockOf(out, db) {
			return &usageError{msg: fmt.Sprintf("-o %s: refusing to replace an account lock file of the warehouse %s; choose another file", out, db)}
		}
	}
	fi, err := os.Stat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("-o %s: %w", out, err)
	}
	if !fi.Mode().IsRegular() {
		return &usageError{msg: fmt.Sprintf("-o %s: refusing to replace it: not a regular file (%v); choose another file", out, fi.Mode().Type())}
	}
	metadata, err := holdsJSON(out)
	if err != nil {
		return fmt.Errorf("-o %s: %w", out, err)
	}
	if !metadata {
		return &usageError{msg: fmt.Sprintf("-o %s: refusing to replace it: it is not empty and holds no JSON object (a database, its WAL, a lock or a config file?); choose another file", out)}
	}
	return nil
}

// samePath reports whether a and b name the same file: os.SameFile when
// both exist, else their absolute paths with the directory's symbolic
// links resolved.
func samePath(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	return resolvedPath(a) == resolvedPath(b)
}

// isLockOf reports whether out is one of the warehouse db's account lock
// files, <db>.<account>.lock beside db's real path (a replaced lock file
// would let a second writer in).
func isLockOf(out, db string) bool {
	real, err := filepath.EvalSymlinks(db)
	if err != nil {
		return false
	}
	if real, err = filepath.Abs(real); err != nil {
		return false
	}
	r := resolvedPath(out)
	return strings.HasPrefix(r, real+".") && strings.HasSuffix(r, ".lock")
}

// resolvedPath is p made absolute and clean, its directory's symbolic
// links resolved when the directory exists.
func resolvedPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

// holdsJSON reports whether the file at path may be replaced by metadata:
// it is empty, or its first non-blank byte opens a JSON object (earlier
// metadata). Anything else (a SQLite database, another database's WAL or
// shared memory, a lock file, a config) is kept.
func holdsJSON(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false, err
	}
	rest := bytes.TrimLeft(head[:n], " \t\r\n")
	return n == 0 || len(rest) > 0 && rest[0] == '{', nil
}

// writeFileAtomic writes b to path through a temporary file beside it and
// a rename, so a reader never sees half a file. A new file is created with
// mode 0644 less the umask (open(2) applies it); a replaced file keeps its
// permission bits.
func writeFileAtomic(path string, b []byte) error {
	var suffix [6]byte
	_, _ = rand.Read(suffix[:]) // never fails (crypto/rand)
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+hex.EncodeToString(suffix[:])+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // fails once renamed
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		if err := f.Chmod(fi.Mode().Perm()); err != nil {
			f.Close()
			return err
		}
	}
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
