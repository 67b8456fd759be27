package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/internal/boundary"
)

// classify wraps *err with load.ErrWarehouse, once, at the boundary of the
// package (boundary.Classify); a lock held by another process is its own
// condition (load.ErrLocked) and left alone. SQLite's verdict that the
// file is damaged or no database is made load.ErrCorrupt. Exported
// functions defer it on their named error.
func classify(err *error) {
	*err = corrupt(*err)
	boundary.Classify(err, load.ErrLocked)
}

// The primary result codes of SQLite that say the file itself is bad.
const (
	sqliteCorrupt = 11 // SQLITE_CORRUPT: the database disk image is malformed
	sqliteNotADB  = 26 // SQLITE_NOTADB: file is not a database
)

// corrupt returns err made load.ErrCorrupt (its text unchanged) when it is
// SQLite's SQLITE_CORRUPT or SQLITE_NOTADB; other errors as they are.
func corrupt(err error) error {
	var se interface{ Code() int }
	if err == nil || errors.Is(err, load.ErrCorrupt) || !errors.As(err, &se) {
		return err
	}
	if c := se.Code() & 0xff; c != sqliteCorrupt && c != sqliteNotADB {
		return err
	}
	return &corruptError{err: err}
}

// corruptError is corrupt's error: err's text, errors.Is load.ErrCorrupt.
type corruptError struct{ err error }

func (e *corruptError) Error() string { return e.err.Error() }

// Unwrap makes errors.Is find load.ErrCorrupt and the cause.
func (e *corruptError) Unwrap() []error { return []error{load.ErrCorrupt, e.err} }

// sqliteReadOnlyDirectory is SQLITE_READONLY_DIRECTORY: SQLite may not
// create a file (-wal, -journal) in the database's directory.
const sqliteReadOnlyDirectory = 8 | 6<<8

// readOnlyDir adds to err, when it is SQLite's refusal to create files
// beside the database at path, a hint naming the directory; other errors
// are returned as they are. The result wraps err.
func readOnlyDir(path string, err error) error {
	var se interface{ Code() int }
	if err == nil || !errors.As(err, &se) || se.Code() != sqliteReadOnlyDirectory {
		return err
	}
	return &readOnlyDirError{dir: filepath.Dir(path), err: err}
}

// readOnlyDirError is readOnlyDir's error.
type readOnlyDirError struct {
	dir string
	err error
}

func (e *readOnlyDirError) Error() string {
	return fmt.Sprintf("%v (SQLite creates the -wal and -journal files beside the database: make the directory %s writable by uid %d)",
		e.err, e.dir, os.Getuid())
}

// Unwrap returns the error of SQLite.
func (e *readOnlyDirError) Unwrap() error { return e.err }
