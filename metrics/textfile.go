package metrics

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/prometheus/common/expfmt"
)

// ErrNoTextfileDir is wrapped by WriteTextfile's error when the
// directory the textfile goes in does not exist (node_exporter's textfile
// collector not installed, say): nothing was written, and nothing else is
// wrong.
var ErrNoTextfileDir = errors.New("the textfile's directory does not exist")

// ErrTextfileDirNotWritable is wrapped by WriteTextfile's error when the
// textfile's directory exists but this process may not create a file in it
// (its owner and mode, an ACL not granted, a read-only mount).
var ErrTextfileDirNotWritable = errors.New("the textfile's directory is not writable")

// WriteTextfile writes the cardsync_* families in the Prometheus text
// format that node_exporter's textfile collector reads, atomically: into a
// temporary file in the same directory (named so the collector, which reads
// only *.prom, skips it), synced, made 0644, then renamed over path. The Go
// and process collectors are left out: they would describe a process that
// has exited, and node_exporter exports its own under the same names. So
// are the series about serve's scheduled backups: a backfill takes none, and
// their zeros would say backups are off or never succeeded. When path's
// directory does not exist the error wraps ErrNoTextfileDir; when it may not
// be written, ErrTextfileDirNotWritable.
func (m *Metrics) WriteTextfile(path string) (err error) {
	mfs, err := m.families.Gather()
	if err != nil {
		return fmt.Errorf("write metrics textfile: gather: %w", err)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		if _, serr := os.Stat(dir); errors.Is(serr, fs.ErrNotExist) {
			return fmt.Errorf("write metrics textfile %s: %w: %s", path, ErrNoTextfileDir, dir)
		}
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
			return fmt.Errorf("write metrics textfile %s: %w: %s (uid %d): %w", path, ErrTextfileDirNotWritable, dir, os.Geteuid(), err)
		}
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriter(tmp)
	for _, mf := range mfs {
		if slices.Contains(backupFamilies, mf.GetName()) {
			continue
		}
		if _, err := expfmt.MetricFamilyToText(bw, mf); err != nil {
			return fmt.Errorf("write metrics textfile %s: %w", path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write metrics textfile %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("write metrics textfile %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write metrics textfile %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write metrics textfile %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write metrics textfile: %w", err)
	}
	return nil
}
