package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cardsync/cardsync/load"
)

// classify wraps *err with load.ErrWarehouse, once, at the boundary of the
// package (load.Classify); a lock held by another process is its own
// condition (load.ErrLocked) and left alone. Exported functions defer it on
// their named error.
func classify(err *error) { load.Classify(err, load.ErrLocked) }

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
