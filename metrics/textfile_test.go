package metrics

import (
	"os"
	"path/filepath"
	"slices"
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
