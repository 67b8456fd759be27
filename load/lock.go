package load

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Lock is the writer lock of one warehouse: an flock on the file path+".lock"
// holding the owner's PID. The kernel drops it when the process dies, so a
// crash never leaves a stale lock.
type Lock struct {
	f *os.File
}

// AcquireLock takes the writer lock for the warehouse at path without
// waiting. If another process holds it, the error is a *LockedError with
// that process's PID (errors.Is(err, ErrLocked)).
func AcquireLock(path string) (*Lock, error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("acquire lock %s: %w", name, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
			return nil, &LockedError{PID: pid, Path: name}
		}
		return nil, fmt.Errorf("acquire lock %s: %w", name, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("acquire lock %s: write pid: %w", name, err)
		}
	}
	return &Lock{f: f}, nil
}

// Release drops the lock. The file stays (removing it would let two
// processes lock different inodes). Release is idempotent.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	_ = f.Truncate(0)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		f.Close()
		return fmt.Errorf("release lock: %w", err)
	}
	return f.Close()
}
