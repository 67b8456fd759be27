package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/worker"
)

// fileFix is the fix of a file the command could not write (the
// warehouse's, or one it writes elsewhere: a report, a backup): the
// directory to create, or the owner, mode and user of the file or
// directory that refuses it; "" for an error of another kind.
func (f fixer) fileFix(err error) string {
	var path *fs.PathError
	if !errors.As(err, &path) {
		return ""
	}
	key := f.pathKey(path.Path)
	switch {
	case errors.Is(err, syscall.EROFS):
		return fmt.Sprintf("the filesystem of %s is mounted read-only: set %s to a writable one (under systemd, one the unit's ReadWritePaths= allows)", filepath.Dir(absPath(path.Path)), key)
	case errors.Is(err, syscall.ENOTDIR):
		return notDirFix(path.Path, key)
	case errors.Is(err, fs.ErrNotExist):
		return missingDirFix(path.Path, key)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, load.ErrNotWritable):
		return permissionFix(path.Path, key)
	}
	return ""
}

// pathKey names the setting that places path: warehouse.path for the
// warehouse's own files (its path, and its -wal, -shm and lock files
// beside it), else the command's output flag.
func (f fixer) pathKey(path string) string {
	if f.output == "" || (f.s.DBPath != "" && strings.HasPrefix(absPath(path), absPath(f.s.DBPath))) {
		return "warehouse.path"
	}
	return f.output
}

// notDirFix is the fix of a path through a file where a directory must
// be: it names that file.
func notDirFix(path, key string) string {
	for p := absPath(path); p != filepath.Dir(p); p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return fmt.Sprintf("%s is a file, not a directory: move it aside, or set %s to a path in a directory", p, key)
		}
	}
	return fmt.Sprintf("a part of %s is not a directory: set %s to a path in a directory", absPath(path), key)
}

// missingDirFix is the fix of a path (key places it) in a directory that
// does not exist.
func missingDirFix(path, key string) string {
	dir := absPath(filepath.Dir(path))
	if _, err := os.Stat(dir); err == nil {
		return ""
	}
	uid := os.Geteuid()
	return fmt.Sprintf("create the directory %s (mkdir -p %s; chown %s %s: the user cardsync runs as, %s, must own it), or set %s to a file in an existing directory",
		dir, worker.ShellQuote(dir), userArg(uid), worker.ShellQuote(dir), userText(uid), key)
}

// permissionFix is the fix of a warehouse file, or a file beside it, that
// this process may not write: it names the first of the path and its
// directory that this process cannot write (the directory when the path
// does not exist), its owner and mode, and the user cardsync runs as.
func permissionFix(path, key string) string {
	target := absPath(path)
	fi, err := os.Stat(target)
	if err != nil || syscall.Access(target, 2 /* W_OK */) == nil {
		target = filepath.Dir(target)
		fi, err = os.Stat(target)
	}
	uid := os.Geteuid()
	if err != nil {
		return fmt.Sprintf("make %s writable by %s, the user cardsync runs as", target, userText(uid))
	}
	kind := "file"
	if fi.IsDir() {
		kind = "directory"
	}
	return fmt.Sprintf("the %s %s is owned by %s with mode %s and cardsync runs as %s: make it writable by that user (chown %s %s), or set %s to a directory that user owns",
		kind, target, ownerText(fi), fi.Mode(), userText(uid), userArg(uid), worker.ShellQuote(target), key)
}

// readableFix is the fix of a file this process may not read: the file's
// owner and mode (its directory's, when the file cannot even be looked
// at) and the user cardsync runs as.
func readableFix(path string) string {
	target := absPath(path)
	fi, err := os.Stat(target)
	if err != nil {
		target = filepath.Dir(target)
		fi, err = os.Stat(target)
	}
	uid := os.Geteuid()
	if err != nil {
		return fmt.Sprintf("make %s readable by %s, the user cardsync runs as", absPath(path), userText(uid))
	}
	kind, verb := "file", "readable"
	if fi.IsDir() {
		kind, verb = "directory", "searchable"
	}
	return fmt.Sprintf("the %s %s is owned by %s with mode %s and cardsync runs as %s: make it %s by that user (chown %s %s, or add the user to its group)",
		kind, target, ownerText(fi), fi.Mode(), userText(uid), verb, userArg(uid), worker.ShellQuote(target))
}

// ownerText names the owner of the file fi describes.
func ownerText(fi os.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return userText(int(st.Uid))
	}
	return "an unknown owner"
}

// userText names a user for a person: "cardsync (uid 998)", or "uid 998"
// without a name.
func userText(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("%s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

// userArg names a user for chown: its name, or its uid.
func userArg(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return worker.ShellQuote(u.Username)
	}
	return strconv.Itoa(uid)
}

// absPath is path made absolute, when it can be.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
