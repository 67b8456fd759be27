package load

import (
	"errors"
)

// FileEvent says what Verify found and did.
type FileEvent int

const (
	// FileOK: the path names the open file and it is writable.
	FileOK FileEvent = iota
	// FileReopened: the connection had the file read-only (its permissions
	// had changed); it was reopened read-write.
	FileReopened
	// FileWrittenBack: the file had been deleted; the open database was
	// written back to the path. Nothing is lost.
	FileWrittenBack
	// FileSwitched: the path now names another cardsync warehouse (a
	// restore, an operator's copy); the writer now uses it.
	FileSwitched
	// FileMovedAside: the path named a file that is not a cardsync
	// warehouse; it was moved aside (to <path>.replaced-<time>) and the open
	// database written back.
	FileMovedAside
)

// Changed reports whether the writer now has another file open: the
// caller's run lock must follow it (load.RunLock.Keep).
func (e FileEvent) Changed() bool { return e >= FileWrittenBack }

// ErrNotWritable is wrapped when the warehouse file cannot be written by
// this process.
var ErrNotWritable = errors.New("the warehouse file is not writable")
