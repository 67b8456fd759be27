package sqlite

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// backupFile is a file in the backup directory named as Backup names them.
type backupFile struct {
	name  string
	stamp string
	n     int
}

// ListBackups returns the backups of the warehouse at warehousePath in dir
// (files named as Backup names them: <stem>-YYYYMMDDTHHMMSSZ.db), newest
// first. It goes by the names only; pruning also checks each file's
// identity.
func ListBackups(dir, warehousePath string) (_ []string, err error) {
	defer classify(&err)
	files, err := listBackups(dir, BackupStem(warehousePath))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Join(dir, f.name)
	}
	return out, nil
}

// NewestOwnBackup returns the newest backup in dir (by its name) of the
// warehouse file at warehousePath that carries that warehouse's identity.
// Files named like its backups that belong to another warehouse (several
// warehouses may share a directory and a file name), cannot be read or are
// no warehouse at all are passed over, as pruning passes them over. It
// returns "" when there is none, or when the warehouse cannot be read or
// has no identity yet (nothing then tells its backups apart).
func NewestOwnBackup(ctx context.Context, dir, warehousePath string) (string, error) {
	id, err := ReadIdentity(ctx, warehousePath)
	if err != nil {
		return "", nil // no identity to match: no backup is known to be its own
	}
	list, err := ListBackups(dir, warehousePath)
	if err != nil {
		return "", err
	}
	wi, _ := os.Stat(warehousePath)
	for _, p := range list {
		if fi, err := os.Stat(p); err == nil && wi != nil && os.SameFile(fi, wi) {
			continue
		}
		if other, err := ReadIdentity(ctx, p); err == nil && other == id {
			return p, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
	}
	return "", nil
}

func listBackups(dir, stem string) ([]backupFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	backupName := backupNameOf(stem)
	var files []backupFile
	for _, e := range entries {
		m := backupName.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		n := 1
		if m[2] != "" {
			n, _ = strconv.Atoi(m[2])
		}
		files = append(files, backupFile{name: e.Name(), stamp: m[1], n: n})
	}
	slices.SortFunc(files, func(a, b backupFile) int {
		return cmp.Or(strings.Compare(b.stamp, a.stamp), b.n-a.n)
	})
	return files, nil
}

// pruneBackups removes all but the newest keep backups of the warehouse
// in dir: files named after its stem that carry the identity of the backup
// just written (keepPath), which stays whatever its name says (a clock set
// back). The warehouse itself stays, should it be named like a backup, and
// so does every file whose identity differs or cannot be read: those are
// returned. Without an identity in keepPath, nothing is pruned.
func pruneBackups(ctx context.Context, dir string, keep int, keepPath, warehouse string) ([]PruneSkip, error) {
	id, err := ReadIdentity(ctx, keepPath)
	if errors.Is(err, ErrNoIdentity) {
		return []PruneSkip{{Path: keepPath, Reason: "the warehouse has no identity yet (written by an older cardsync): no backup is pruned until a run upgrades it"}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBackupPrune, err)
	}
	files, err := listBackups(dir, BackupStem(warehouse))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBackupPrune, err)
	}
	wi, _ := os.Stat(warehouse)
	var skipped []PruneSkip
	var errs []error
	kept := 0
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if p == keepPath {
			continue
		}
		if fi, err := os.Stat(p); err == nil && wi != nil && os.SameFile(fi, wi) {
			continue
		}
		other, err := ReadIdentity(ctx, p)
		if errors.Is(err, ErrNoIdentity) {
			skipped = append(skipped, PruneSkip{Path: p, Reason: "it has no warehouse identity (written by an older cardsync, or not a warehouse): remove it by hand once it is not needed"})
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return skipped, fmt.Errorf("%w: %w", ErrBackupPrune, ctx.Err())
			}
			skipped = append(skipped, PruneSkip{Path: p, Reason: "its identity cannot be read: " + err.Error()})
			continue
		}
		if other != id {
			skipped = append(skipped, PruneSkip{Path: p, Reason: fmt.Sprintf("it is a backup of another warehouse (identity %s, this one's is %s)", other, id)})
			continue
		}
		if kept < keep-1 {
			kept++
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return skipped, fmt.Errorf("%w: %w", ErrBackupPrune, errors.Join(errs...))
	}
	return skipped, nil
}
