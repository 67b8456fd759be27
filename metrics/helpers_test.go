package metrics

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// families gathers everything /metrics serves, by name.
func families(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// value returns the value of the series of family name whose labels are
// labels ("k=v,k=v"; "" for none); ok is false when there is no such series.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name, labels string) (v float64, ok bool) {
	t.Helper()
	mf := fams[name]
	if mf == nil {
		return 0, false
	}
	for _, mt := range mf.GetMetric() {
		var parts []string
		for _, lp := range mt.GetLabel() {
			parts = append(parts, lp.GetName()+"="+lp.GetValue())
		}
		if strings.Join(parts, ",") != labels {
			continue
		}
		switch {
		case mt.Counter != nil:
			return mt.Counter.GetValue(), true
		case mt.Gauge != nil:
			return mt.Gauge.GetValue(), true
		case mt.Histogram != nil:
			return float64(mt.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// mustValue is value that fails the test when the series is missing.
func mustValue(t *testing.T, fams map[string]*dto.MetricFamily, name, labels string) float64 {
	t.Helper()
	v, ok := value(t, fams, name, labels)
	if !ok {
		t.Fatalf("no series %s{%s}", name, labels)
	}
	return v
}

// simJob is a worker.Job on a simulator with metrics wired in as serve
// wires them.
type simJob struct {
	sim *sim.Server
	job *worker.Job
	wh  *sqlite.Warehouse
	m   *Metrics
	obs worker.Observer
}

func newSimJob(t *testing.T, opts sim.Options) *simJob {
	t.Helper()
	m := New(Options{})
	return newAccountJob(t, m, filepath.Join(t.TempDir(), "w.db"), load.DefaultAccount, opts)
}

// newAccountJob is a job of account in the warehouse at path, against a
// simulator of its own, told to m as serve tells it: m's client and run
// observers of account, the gauges seeded from the warehouse.
func newAccountJob(t *testing.T, m *Metrics, path, account string, opts sim.Options) *simJob {
	t.Helper()
	return newTargetJob(t, m, worker.Target{Path: path}, account, opts)
}

// newTargetJob is newAccountJob on the warehouse of target (a file or a
// PostgreSQL URL); wh is nil for PostgreSQL.
func newTargetJob(t testing.TB, m *Metrics, target worker.Target, account string, opts sim.Options) *simJob {
	t.Helper()
	opts.Window, opts.Limit, opts.AuthLimit = time.Second, 10000, 100
	srv := sim.New(opts)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	st, err := worker.OpenTarget(t.Context(), target, load.Options{Account: account, BusyTimeout: 30 * time.Second}, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := m.Refresh(t.Context(), st.Warehouse); err != nil {
		t.Fatalf("seed: %v", err)
	}
	client, err := extract.New(extract.Config{
		BaseURL:       ts.URL,
		Email:         sim.DefaultEmail,
		Password:      sim.DefaultPassword,
		RateLimit:     extract.Rate{N: 10000, Per: time.Second},
		AuthRateLimit: extract.Rate{N: 100, Per: time.Second},
		Timeout:       5 * time.Second,
		MaxWait:       10 * time.Second,
		Observer:      m.ClientObserver(account),
	})
	if err != nil {
		t.Fatal(err)
	}
	obs := m.RunObserver(account, st.Warehouse)
	job := st.Job(client, nil, worker.JobOptions{Version: "test", Observer: obs})
	wh, _ := st.Warehouse.(*sqlite.Warehouse)
	return &simJob{sim: srv, job: job, wh: wh, m: m, obs: obs}
}
