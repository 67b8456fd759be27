package report

import (
	"bufio"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cardsync/cardsync/load"
)

// DefaultSince is the period a report covers when Options.Since is zero.
const DefaultSince = 90 * 24 * time.Hour

// Options configures Write.
type Options struct {
	// Since is how far back from Now the report looks (default
	// DefaultSince).
	Since time.Duration
	// Now ends the period and is the report's generation time (default
	// time.Now()).
	Now time.Time
}

// Write reads the period from the warehouse (a read-only one is enough)
// and writes the report to out atomically: into a temporary file in the
// same directory, synced, then renamed over out, so a file server or a
// shared folder never shows half a page. A new file gets mode 0644 less the
// process umask; a replaced file keeps its mode. serve can call it after
// each successful run.
func Write(ctx context.Context, w *load.Warehouse, out string, opts Options) error {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	since := opts.Since
	if since == 0 {
		since = DefaultSince
	}
	if since < 0 {
		return fmt.Errorf("write report %s: since %v: want a positive duration", out, since)
	}
	data, err := w.ReportData(ctx, now.Add(-since), now)
	if err != nil {
		return fmt.Errorf("write report %s: %w", out, err)
	}
	if err := writeAtomic(out, func(wr io.Writer) error { return Render(wr, data) }); err != nil {
		return fmt.Errorf("write report %s: %w", out, err)
	}
	return nil
}

// writeAtomic writes out through a temporary file beside it and a rename.
func writeAtomic(out string, fill func(io.Writer) error) (err error) {
	dir, base := filepath.Split(out)
	if dir == "" {
		dir = "."
	}
	var f *os.File
	for range 10 {
		var suffix [6]byte
		_, _ = rand.Read(suffix[:])
		name := filepath.Join(dir, "."+base+"."+hex.EncodeToString(suffix[:])+".tmp")
		// open(2) applies the umask to 0644, as os.WriteFile would.
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := fill(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if fi, serr := os.Stat(out); serr == nil && fi.Mode().IsRegular() {
		if err := f.Chmod(fi.Mode().Perm()); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), out)
}

//go:embed report.html.tmpl
var pageTemplate string

// Render writes the report of d as one self-contained HTML document:
// inline CSS and SVG only, no script, no external reference of any kind.
func Render(w io.Writer, d load.ReportData) error {
	t, err := template.New("report").Funcs(template.FuncMap{
		"t":     func(s string) template.HTML { return template.HTML(escape(s)) },
		"stamp": stamp,
	}).Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	if err := t.Execute(w, newPage(d)); err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}
