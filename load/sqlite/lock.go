package sqlite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/cardsync/cardsync/load"
)

// Lock is the writer lock of one warehouse: an flock(2) on the database
// file itself, so every path that reaches the file (a symlink, a hard link,
// a relative path, a bind mount) meets the same lock, and the kernel drops it
// when the process dies, so a crash never leaves a stale lock. The holder's
// PID is also written to <real path>.lock for people and for the error
// message.
//
// flock locks are independent of the POSIX locks SQLite takes on the same
// file on Linux, but closing any descriptor of the file drops every POSIX
// lock the process holds on it. So a Lock keeps its descriptor open until
// Close, and Release (flock LOCK_UN) does not close it: a daemon that keeps
// the warehouse open takes and releases the lock around each run and closes
// the Lock only after the warehouse.
//
// An account lock (OpenAccountLock) is the run lock of one account of the
// file: see OpenAccountLock.
type Lock struct {
	f       *os.File // the database file, flock'd while held
	pidFile string
	held    bool
	// account is "" for the whole-file lock; for an account lock, rw is the
	// database file opened read-write, holding the account's byte-range
	// lock while held.
	account string
	rw      *os.File
}

// OpenLock opens (creating it with mode if missing, exactly, whatever the
// umask) the database file at path for locking, without taking the lock.
func OpenLock(path string, mode os.FileMode) (_ *Lock, err error) {
	defer classify(&err)
	if mode == 0 {
		mode = load.DefaultFileMode
	}
	if err := createFile(path, mode); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("warehouse directory %s does not exist: create it (writable by the user cardsync runs as) or set warehouse.path: %w", filepath.Dir(path), err)
		}
		return nil, fmt.Errorf("open lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	if abs, err := filepath.Abs(real); err == nil {
		real = abs
	}
	return &Lock{f: f, pidFile: real + ".lock"}, nil
}

// accountLockBase is where account locks start in the database file's
// byte range: far beyond any byte SQLite locks (1 GiB and the 512 bytes
// after it) and any size the file reaches, so they meet nothing but each
// other.
const accountLockBase = int64(1) << 62

// accountLockOffset is the one byte account locks: a hash of its name
// (FNV-1a, 62 bits) above accountLockBase. Two names meeting on one byte
// would only make their runs exclude each other.
func accountLockOffset(account string) int64 {
	h := fnv.New64a()
	h.Write([]byte(account))
	return accountLockBase | int64(h.Sum64()&(uint64(accountLockBase)-1))
}

// OpenAccountLock opens (creating it with mode if missing) the run lock of
// account in the warehouse at path, without taking it. Acquire takes two
// locks on the database file, both without waiting:
//
//   - a shared flock(2): every account's writer shares it, so the whole-file
//     lock (AcquireLock: restore, check, an older cardsync) excludes every
//     account's run and is excluded by any;
//   - an open file description lock (fcntl F_OFD_SETLK) on one byte of the
//     account's own, beyond the end of any file (accountLockOffset): a
//     second writer of the same account, in this process or another, is
//     refused with a *LockedError.
//
// Both live on the database file itself, so every path to it (symlink, hard
// link, bind mount) meets them, and the kernel drops both when the process
// dies. They are independent of SQLite's own POSIX locks, which take other
// bytes. The holder's PID is written to <real path>.lock for the account
// DefaultAccount (the path of the one-account lock) and to
// <real path>.<account>.lock for the others, for people and for messages.
func OpenAccountLock(path string, mode os.FileMode, account string) (_ *Lock, err error) {
	defer classify(&err)
	if err := load.CheckAccountName(account); err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	l, err := OpenLock(path, mode)
	if err != nil {
		return nil, err
	}
	l.account = account
	if account != load.DefaultAccount {
		l.pidFile = strings.TrimSuffix(l.pidFile, ".lock") + "." + account + ".lock"
	}
	l.openRW()
	return l, nil
}

// openRW opens the descriptor of the account's byte-range lock, which
// needs write access. A file this process may not write keeps rw nil:
// Acquire then takes the whole-file lock instead (stricter, never wrong), so
// the run goes on to the file check that says the warehouse is not
// writable, and the next Acquire tries again.
func (l *Lock) openRW() {
	if rw, err := os.OpenFile(l.f.Name(), os.O_RDWR, 0); err == nil {
		l.rw = rw
	}
}

// rangeLock sets (typ F_WRLCK) or clears (F_UNLCK) the account's byte on
// rw without waiting.
func (l *Lock) rangeLock(typ int16) error {
	lk := syscall.Flock_t{Type: typ, Whence: io.SeekStart, Start: accountLockOffset(l.account), Len: 1}
	return syscall.FcntlFlock(l.rw.Fd(), fOFDSetLK, &lk)
}

// F_OFD_SETLK and F_OFD_GETLK (Linux 3.15+; the syscall package lacks
// them).
const (
	fOFDGetLK = 36
	fOFDSetLK = 37
)

// acquireAccount takes an account lock (see OpenAccountLock).
func (l *Lock) acquireAccount() error {
	if err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return &load.LockedError{PID: l.holder(), Path: l.f.Name()}
		}
		return fmt.Errorf("acquire lock on %s: %w", l.f.Name(), err)
	}
	if err := l.rangeLock(syscall.F_WRLCK); err != nil {
		_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			return &load.LockedError{PID: readPID(l.pidFile), Path: l.pidFile}
		}
		return fmt.Errorf("acquire the lock of account %q on %s: %w", l.account, l.f.Name(), err)
	}
	return nil
}

// Account is the account whose runs the lock guards ("" for the
// whole-file lock).
func (l *Lock) Account() string { return l.account }

// AccountLockHolder reports the PID of the process holding the run lock of
// account in the warehouse at path: 0 when none holds it, -1 when one does
// but its PID is unknown. It takes and disturbs no lock.
func AccountLockHolder(path, account string) (_ int, err error) {
	defer classify(&err)
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("lock holder of %s: %w", path, err)
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: accountLockOffset(account), Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), fOFDGetLK, &lk); err != nil {
		return 0, fmt.Errorf("lock holder of %s: %w", path, err)
	}
	if lk.Type == syscall.F_UNLCK {
		return 0, nil
	}
	l := Lock{f: f, pidFile: path + ".lock"}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		if abs, err := filepath.Abs(real); err == nil {
			l.pidFile = abs + ".lock"
		}
	}
	if account != load.DefaultAccount {
		l.pidFile = strings.TrimSuffix(l.pidFile, ".lock") + "." + account + ".lock"
	}
	if pid := readPID(l.pidFile); pid > 0 {
		return pid, nil
	}
	return -1, nil
}

// AcquireLock opens the lock of the warehouse at path and takes it without
// waiting. If another process holds it, the error is a *LockedError with
// that process's PID (errors.Is(err, ErrLocked)). Close releases and closes
// it.
func AcquireLock(path string) (_ *Lock, err error) {
	defer classify(&err)
	l, err := OpenLock(path, 0)
	if err != nil {
		return nil, err
	}
	if err := l.Acquire(); err != nil {
		l.f.Close()
		return nil, err
	}
	return l, nil
}

// Acquire takes the lock without waiting.
func (l *Lock) Acquire() (err error) {
	defer classify(&err)
	if l.held {
		return nil
	}
	if l.account != "" && l.rw == nil {
		l.openRW()
	}
	if l.rw != nil {
		if err := l.acquireAccount(); err != nil {
			return err
		}
	} else if err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return &load.LockedError{PID: l.holder(), Path: l.f.Name()}
		}
		return fmt.Errorf("acquire lock on %s: %w", l.f.Name(), err)
	}
	l.held = true
	// The PID file is informative only: the flock is the lock.
	_ = os.WriteFile(l.pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o640)
	return nil
}

// Release drops the lock and keeps the descriptor open (see Lock). It is
// idempotent.
func (l *Lock) Release() (err error) {
	defer classify(&err)
	if l == nil || !l.held {
		return nil
	}
	l.held = false
	_ = os.Truncate(l.pidFile, 0) // informative file only
	if l.rw != nil {
		if err := l.rangeLock(syscall.F_UNLCK); err != nil {
			return fmt.Errorf("release lock: %w", err)
		}
	}
	if err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN); err != nil {
		return fmt.Errorf("release lock: %w", err)
	}
	return nil
}

// Close releases the lock and closes its descriptor. Call it after the
// warehouse is closed. It is idempotent.
func (l *Lock) Close() (err error) {
	defer classify(&err)
	if l == nil || l.f == nil {
		return nil
	}
	err = l.Release()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if l.rw != nil {
		if cerr := l.rw.Close(); err == nil {
			err = cerr
		}
		l.rw = nil
	}
	l.f = nil
	return err
}

// Reopen moves a held lock to the file the path names now (after the
// warehouse file was written back or replaced, see Warehouse.Verify): the
// old descriptor is closed and the new file locked. If another process
// holds the new file, the error wraps ErrLocked and the lock is not held.
func (l *Lock) Reopen() (err error) {
	defer classify(&err)
	path := l.f.Name()
	held := l.held
	if err := l.Close(); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("reopen lock: %w", err)
	}
	l.f = f
	if l.account != "" {
		l.rw = nil
		l.openRW()
	}
	if held {
		return l.Acquire()
	}
	return nil
}

// Held reports whether this process holds the lock.
func (l *Lock) Held() bool { return l != nil && l.held }

// Hold implements load.RunLock: Acquire (a file's lock needs no context).
func (l *Lock) Hold(context.Context) error { return l.Acquire() }

// Keep implements load.RunLock: after the warehouse's Verify, a held lock
// moves to the file its path names now when that is no longer the file
// locked (written back or replaced: Reopen); then nothing is left to do
// while the run goes on, so stop does nothing and ctx is returned as is.
func (l *Lock) Keep(ctx context.Context) (context.Context, func(), error) {
	if l.held && l.moved() {
		if err := l.Reopen(); err != nil {
			return ctx, func() {}, fmt.Errorf("lock the warehouse file now at %s: %w", l.f.Name(), err)
		}
	}
	return ctx, func() {}, nil
}

// moved reports whether the path no longer names the file the lock has
// open (deleted, written back, replaced).
func (l *Lock) moved() bool {
	var open, now syscall.Stat_t
	if syscall.Fstat(int(l.f.Fd()), &open) != nil || syscall.Stat(l.f.Name(), &now) != nil {
		return true
	}
	return open.Dev != now.Dev || open.Ino != now.Ino
}

// Check implements load.RunLock: a file's lock, once held, stays held
// until released (the kernel keeps it), so it never says stop.
func (l *Lock) Check() error { return nil }

// holder finds the PID holding an flock on the file: from /proc/locks
// (which names the inode), else from the PID file; 0 when unknown.
func (l *Lock) holder() int {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(l.f.Fd()), &st); err == nil {
		if pid := flockHolder(uint64(st.Dev), st.Ino); pid > 0 {
			return pid
		}
	}
	return readPID(l.pidFile)
}

// readPID reads the PID a lock's informative file holds; 0 when unknown.
func readPID(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// flockHolder reads /proc/locks for an FLOCK on dev:ino. Lines look like
// "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF" (major:minor:inode in
// hex for the device).
func flockHolder(dev, ino uint64) int {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	major := (dev >> 8) & 0xfff
	minor := (dev & 0xff) | ((dev >> 12) & 0xfff00)
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" {
			continue
		}
		id := strings.Split(fields[5], ":")
		if len(id) != 3 {
			continue
		}
		ma, err1 := strconv.ParseUint(id[0], 16, 64)
		mi, err2 := strconv.ParseUint(id[1], 16, 64)
		in, err3 := strconv.ParseUint(id[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || ma != major || mi != minor || in != ino {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil {
			return pid
		}
	}
	return 0
}

// LockHolder reports the PID of the process holding the writer lock of the
// warehouse at path (0 when none), read from /proc/locks without taking or
// disturbing the lock: `cardsync status` uses it to tell a run marked
// running by a live process from one whose process died.
func LockHolder(path string) (_ int, err error) {
	defer classify(&err)
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, fmt.Errorf("lock holder of %s: %w", path, err)
	}
	return flockHolder(uint64(st.Dev), st.Ino), nil
}
