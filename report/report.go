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
	"reflect"
	"strings"
	"time"

	"github.com/cardsync/cardsync/internal/english"
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
	// Mode is the permission of a new report file, less the process umask
	// (default 0644). Callers pass the warehouse file's, so that the page,
	// which shows the warehouse's data, is never more readable than the
	// warehouse.
	Mode fs.FileMode
	// Account is the name of the account the page shows, said in its
	// heading and title. Callers set it when the settings name accounts
	// (config.Settings.NamedAccounts) and leave it empty for the [api]
	// table's one account, whose page does not mention it.
	Account string
}

// Write reads the period from the warehouse (either one, SQLite or
// PostgreSQL; a read-only handle is enough) and writes the report to out atomically: into a temporary file in the
// same directory, synced, then renamed over out, so a file server or a
// shared folder never shows half a page. A new file gets opts.Mode (0644
// by default) less the process umask; a replaced file keeps its mode. serve can call it after
// each successful run.
func Write(ctx context.Context, w load.Reporter, out string, opts Options) error {
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
	mode := opts.Mode.Perm()
	if mode == 0 {
		mode = 0o644
	}
	fill := func(wr io.Writer) error { return render(ctx, wr, data, opts.Account) }
	if err := writeAtomic(out, mode, fill); err != nil {
		return fmt.Errorf("write report %s: %w", out, err)
	}
	return nil
}

// writeAtomic writes out through a temporary file beside it and a rename;
// a new file gets mode less the umask, a replaced one keeps its mode. The
// temporary file is removed on every way out but the rename, a panic in
// fill included (the panic goes on).
func writeAtomic(out string, mode fs.FileMode, fill func(io.Writer) error) (err error) {
	dir, base := filepath.Split(out)
	if dir == "" {
		dir = "."
	}
	var f *os.File
	for range 10 {
		var suffix [6]byte
		_, _ = rand.Read(suffix[:])
		name := filepath.Join(dir, "."+base+"."+hex.EncodeToString(suffix[:])+".tmp")
		// open(2) applies the umask to mode, as os.WriteFile would.
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
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
	if err := os.Rename(f.Name(), out); err != nil {
		return err
	}
	renamed = true
	return nil
}

//go:embed report.html.tmpl
var pageTemplate string

// Render writes the report of d as one self-contained HTML document:
// inline CSS and SVG only, no script, no external reference of any kind.
func Render(w io.Writer, d load.ReportData) error {
	return render(context.Background(), w, d, "")
}

// render is Render of the page of account (empty: not named) that stops
// with ctx's error when ctx is done.
func render(ctx context.Context, w io.Writer, d load.ReportData, account string) error {
	t, err := template.New("report").Funcs(template.FuncMap{
		"t":     func(s string) template.HTML { return template.HTML(escape(s)) },
		"stamp": stamp,
		// plural is english.Count of any integer the page holds.
		"plural": func(n any, noun string) (string, error) {
			v := reflect.ValueOf(n)
			if !v.CanInt() {
				return "", fmt.Errorf("plural of %T", n)
			}
			return english.Count(v.Int(), noun), nil
		},
		"id": idHTML,
		// name is t, with a break allowed after each '_' (amount names).
		"name": func(s string) template.HTML {
			return template.HTML(strings.ReplaceAll(escape(s), "_", "_<wbr>"))
		},
	}).Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	p, err := newPage(ctx, d)
	if err != nil {
		return fmt.Errorf("render report: %w", err)
	}
	p.Account = account
	if err := t.Execute(ctxWriter{ctx, w}, p); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("render report: %w", cerr)
		}
		return fmt.Errorf("render report: %w", err)
	}
	return nil
}

// ctxWriter fails its writes once ctx is done, so that the template stops
// at its next write.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(b)
}
