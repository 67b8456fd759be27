package metrics

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/worker"
)

func TestTextfileParses(t *testing.T) {
	m := New(Options{})
	m.RunFinished(load.DefaultAccount, worker.Result{Trigger: worker.TriggerBackfill, Status: load.StatusFailed, Duration: 3 * time.Second})
	dir := t.TempDir()
	path := filepath.Join(dir, "cardsync.prom")
	if err := os.WriteFile(path, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteTextfile(path); err != nil {
		t.Fatalf("WriteTextfile: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("the textfile does not parse: %v", err)
	}
	for _, name := range listed {
		if slices.Contains(backupFamilies, name) {
			if fams[name] != nil {
				t.Errorf("%s in the textfile: a backfill takes no scheduled backups", name)
			}
			continue
		}
		if fams[name] == nil {
			t.Errorf("%s missing from the textfile", name)
		}
	}
	for name := range fams {
		if name == "go_goroutines" || name == "process_start_time_seconds" {
			t.Errorf("%s in the textfile: node_exporter exports its own", name)
		}
	}
	var failed float64
	for _, mt := range fams["cardsync_runs_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range mt.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["trigger"] == "backfill" && labels["status"] == "failed" {
			failed = mt.GetCounter().GetValue()
		}
	}
	if failed != 1 {
		t.Errorf("runs_total{backfill,failed} = %v in the textfile, want 1", failed)
	}
	// Only the final file is left: the temporary one was renamed.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files in the directory: %v, want only cardsync.prom", entries)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 (node_exporter reads it)", fi.Mode().Perm())
	}
}

func TestTextfileIntoMissingDirectoryFails(t *testing.T) {
	m := New(Options{})
	if err := m.WriteTextfile(filepath.Join(t.TempDir(), "nope", "cardsync.prom")); err == nil {
		t.Error("WriteTextfile into a missing directory succeeded")
	}
}

// TestTextfileMissingDirectory: only a directory that does not exist wraps
// ErrNoTextfileDir; a path whose "directory" is a regular file is another
// failure.
func TestTextfileMissingDirectory(t *testing.T) {
	m := New(Options{})
	missing := filepath.Join(t.TempDir(), "node-exporter", "cardsync.prom")
	if err := m.WriteTextfile(missing); !errors.Is(err, ErrNoTextfileDir) || !strings.Contains(err.Error(), missing) {
		t.Errorf("WriteTextfile into a missing directory: %v, want ErrNoTextfileDir naming the path", err)
	}
	file := filepath.Join(t.TempDir(), "node-exporter")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteTextfile(filepath.Join(file, "cardsync.prom")); err == nil || errors.Is(err, ErrNoTextfileDir) {
		t.Errorf("WriteTextfile under a regular file: %v, want an error other than ErrNoTextfileDir", err)
	}
}
