package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/worker"
)

// Triggers and Statuses are the sync_runs values a run counter is created
// for at start-up: every trigger, and every status a run can end with.
var (
	Triggers = []string{worker.TriggerSchedule, worker.TriggerBackfill, worker.TriggerDemo}
	Statuses = []string{load.StatusSucceeded, load.StatusFailed, load.StatusInterrupted, load.StatusAbandoned}
	// Changes are the values of cardsync_cards_synced_total's change label.
	Changes = []string{"new", "changed", "unchanged", "removed", "rejected"}
)

// DefaultHealthyWithin is Options.HealthyWithin's default: three runs of
// the default 15-minute schedule.
const DefaultHealthyWithin = 45 * time.Minute

// Warehouse is what Refresh reads: load.Warehouse is one.
type Warehouse interface {
	Summary(ctx context.Context) (load.Summary, error)
}

// Options configure New. Zero fields take the documented defaults.
type Options struct {
	// HealthyWithin is how old the last successful run may be while
	// /healthz answers 200 (default DefaultHealthyWithin).
	HealthyWithin time.Duration
	// Now is the clock of /healthz and of the run timestamps (default
	// time.Now).
	Now func() time.Time
	// Logger receives a line when a refresh fails (nil discards).
	Logger *slog.Logger
}

// Metrics holds every series cardsync exports and the state /healthz
// judges. ClientObserver and RunObserver give the hooks extract and worker
// call. All methods are safe for concurrent use.
type Metrics struct {
	opts Options
	// families holds the cardsync_* collectors (the textfile writes only
	// these); runtime holds the Go and process collectors.
	families, runtime *prometheus.Registry

	runs           *prometheus.CounterVec
	runDuration    prometheus.Histogram
	lastRun        prometheus.Gauge
	lastSuccess    prometheus.Gauge
	failedInARow   prometheus.Gauge
	cards          *prometheus.GaugeVec
	synced         *prometheus.CounterVec
	removalsHeld   prometheus.Gauge
	requests       *prometheus.CounterVec
	retries        prometheus.Counter
	rateLimited    prometheus.Counter
	authRequests   prometheus.Counter
	snapshot       prometheus.Gauge
	warehouseBytes prometheus.Gauge
	backup         prometheus.Gauge
	backups        *prometheus.CounterVec
	notStarted     prometheus.Counter
	healthyWithin  prometheus.Gauge

	mu     sync.Mutex
	health healthState
}

// New builds the registries and creates every series at 0, every label
// combination included, so a dashboard or an alert sees them before the
// first run.
func New(opts Options) *Metrics {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.HealthyWithin <= 0 {
		opts.HealthyWithin = DefaultHealthyWithin
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{opts: opts, families: prometheus.NewRegistry(), runtime: prometheus.NewRegistry()}
	m.runtime.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := builder{m.families}
	m.runs = f.counterVec("cardsync_runs_total", "Runs that ended, by their sync_runs trigger and final status (abandoned: found left running by a dead process).", "trigger", "status")
	m.runDuration = f.histogram("cardsync_run_duration_seconds", "How long runs took, from the lock to the recorded result.",
		[]float64{1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400})
	m.lastRun = f.gauge("cardsync_last_run_timestamp_seconds", "When the last run ended, whatever its status (unix seconds; 0: none yet).")
	m.lastSuccess = f.gauge("cardsync_last_success_timestamp_seconds", "When the last successful run ended (unix seconds; 0: none yet).")
	m.failedInARow = f.gauge("cardsync_runs_failed_in_a_row", "Failed and abandoned runs since the last success (an interrupted run is not a failure).")
	m.cards = f.gaugeVec("cardsync_cards", "Cards in the warehouse: live (listed upstream) or removed.", "state")
	m.synced = f.counterVec("cardsync_cards_synced_total", "Cards runs committed, by what the run found (rejected: items set aside in rejected_cards).", "change")
	m.removalsHeld = f.gauge("cardsync_removals_held", "Cards the mass-removal guard held back in the last finished walk.")
	m.requests = f.counterVec("cardsync_requests_total", "HTTP attempts to the API by endpoint (token, account, cards) and status class (network: no answer).", "endpoint", "code")
	m.retries = f.counter("cardsync_retries_total", "Attempts repeated after a transient failure (429, 5xx, network error, truncated body).")
	m.rateLimited = f.counter("cardsync_rate_limited_total", "429 answers from the API; client-side pacing should keep this at 0.")
	m.authRequests = f.counter("cardsync_auth_requests_total", "Token requests sent.")
	m.snapshot = f.gauge("cardsync_account_snapshot_timestamp_seconds", "When the latest account snapshot was taken (unix seconds; 0: none yet).")
	m.warehouseBytes = f.gauge("cardsync_warehouse_bytes", "Size of the warehouse file and its WAL after the last run.")
	m.backup = f.gauge("cardsync_backup_last_success_timestamp_seconds", "When the last backup succeeded (unix seconds; 0: none, or backups not configured).")
	m.notStarted = f.counter("cardsync_run_start_failures_total", "Runs that could not start (writer lock, file check, run row): no sync_runs row records them.")
	m.backups = f.counterVec("cardsync_backups_total", "Scheduled backups serve took, by result (succeeded, failed).", "result")
	for _, r := range []string{"succeeded", "failed"} {
		m.backups.WithLabelValues(r)
	}
	m.healthyWithin = f.gauge("cardsync_healthy_within_seconds", "[metrics] healthy_within: how old the last success may be while /healthz answers 200.")

	for _, t := range Triggers {
		for _, s := range Statuses {
			m.runs.WithLabelValues(t, s)
		}
	}
	for _, s := range []string{"live", "removed"} {
		m.cards.WithLabelValues(s)
	}
	for _, c := range Changes {
		m.synced.WithLabelValues(c)
	}
	for _, e := range extract.Endpoints() {
		for _, c := range extract.StatusClasses() {
			m.requests.WithLabelValues(e, c)
		}
	}
	m.healthyWithin.Set(opts.HealthyWithin.Seconds())
	m.health = healthState{started: opts.Now(), within: opts.HealthyWithin}
	return m
}

// Gatherer returns everything /metrics serves: the cardsync_* families and
// the Go and process collectors.
func (m *Metrics) Gatherer() prometheus.Gatherer {
	return prometheus.Gatherers{m.families, m.runtime}
}

// Handler serves /metrics (the Prometheus exposition formats) and /healthz.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.Gatherer(), promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /healthz", m.serveHealth)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("cardsync: /metrics, /healthz\n"))
	})
	return mux
}

// BackupSucceeded records a backup that finished at t: the backup code
// calls it after each successful backup.
func (m *Metrics) BackupSucceeded(t time.Time) {
	m.backups.WithLabelValues("succeeded").Inc()
	m.backup.Set(unixSeconds(t))
}

// BackupFailed counts a scheduled backup that failed.
func (m *Metrics) BackupFailed() { m.backups.WithLabelValues("failed").Inc() }

// SetLastBackup sets the last backup's time without counting a backup: at
// start-up from the newest backup on disk, or the zero time (0) when
// backups are not configured.
func (m *Metrics) SetLastBackup(t time.Time) { m.backup.Set(unixSeconds(t)) }

// SetHealthyWithin changes how old the last success may be (a reload
// with a new schedule); d <= 0 keeps the current value.
func (m *Metrics) SetHealthyWithin(d time.Duration) {
	if d <= 0 {
		return
	}
	m.mu.Lock()
	m.health.within = d
	m.mu.Unlock()
	m.healthyWithin.Set(d.Seconds())
}

// RunObserver returns the worker.Observer that counts each run that ended
// (RunFinished) and then refreshes the warehouse gauges from w (Refresh;
// nil w skips that). A failed refresh is logged at warn and changes
// nothing.
func (m *Metrics) RunObserver(w Warehouse) worker.Observer { return runObserver{m, w} }

type runObserver struct {
	m *Metrics
	w Warehouse
}

// RunNotStarted implements worker.StartObserver.
func (o runObserver) RunNotStarted(string, error) { o.m.notStarted.Inc() }

func (o runObserver) RunFinished(ctx context.Context, r worker.Result) {
	o.m.RunFinished(r)
	if o.w == nil {
		return
	}
	if err := o.m.Refresh(ctx, o.w); err != nil {
		o.m.opts.Logger.Warn("metrics: read the warehouse summary after the run", "err", err)
	}
}

// RunFinished counts a run that ended: its trigger and status, the runs it
// found abandoned, its duration and cards, and the timestamps /healthz
// judges.
func (m *Metrics) RunFinished(r worker.Result) {
	now := m.opts.Now()
	m.runs.WithLabelValues(knownTrigger(r.Trigger), r.Status).Inc()
	for _, t := range r.Abandoned {
		m.runs.WithLabelValues(knownTrigger(t), load.StatusAbandoned).Inc()
	}
	m.runDuration.Observe(r.Duration.Seconds())
	for c, n := range map[string]int{"new": r.New, "changed": r.Changed, "unchanged": r.Unchanged, "removed": r.Removed, "rejected": r.Rejected} {
		m.synced.WithLabelValues(c).Add(float64(n))
	}
	if r.WalkComplete {
		m.removalsHeld.Set(float64(r.RemovalsHeld))
	}
	if !r.AccountSnapshotAt.IsZero() {
		m.snapshot.Set(unixSeconds(r.AccountSnapshotAt))
	}
	m.lastRun.Set(unixSeconds(now))
	m.mu.Lock()
	m.health.lastRunStatus, m.health.lastRunAt = r.Status, now
	if r.Status == load.StatusSucceeded {
		m.health.lastSuccess = now
		m.lastSuccess.Set(unixSeconds(now))
		m.failedInARow.Set(0)
	} else if r.Status == load.StatusFailed {
		// As load.Summary counts: failed and abandoned runs.
		m.failedInARow.Add(float64(1 + len(r.Abandoned)))
	}
	m.mu.Unlock()
}

// Refresh sets the gauges that describe the warehouse from w's summary:
// last run and last success (so a restart does not reset them to 0), the
// account snapshot, the cards, removals held, failures in a row and the
// file size. serve calls it at start-up; RunObserver after every run.
func (m *Metrics) Refresh(ctx context.Context, w Warehouse) error {
	s, err := w.Summary(ctx)
	if err != nil {
		return fmt.Errorf("metrics refresh: %w", err)
	}
	m.cards.WithLabelValues("live").Set(float64(s.CurrentCards))
	m.cards.WithLabelValues("removed").Set(float64(s.RemovedCards))
	m.removalsHeld.Set(float64(s.RemovalsHeld))
	m.failedInARow.Set(float64(s.FailuresInARow))
	m.warehouseBytes.Set(float64(s.DatabaseBytes + s.WALBytes))
	if s.LastSnapshotAt != nil {
		m.snapshot.Set(unixSeconds(*s.LastSnapshotAt))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range s.Runs {
		if r.FinishedAt != nil {
			// Never move the gauge back: the warehouse stamps whole seconds.
			if t := *r.FinishedAt; t.After(m.health.lastRunAt.Truncate(time.Second)) {
				m.health.lastRunStatus, m.health.lastRunAt = r.Status, t
				m.lastRun.Set(unixSeconds(t))
			}
			break
		}
	}
	if s.LastSuccessAt != nil && s.LastSuccessAt.After(m.health.lastSuccess.Truncate(time.Second)) {
		m.health.lastSuccess = *s.LastSuccessAt
		m.lastSuccess.Set(unixSeconds(*s.LastSuccessAt))
	}
	return nil
}

// ClientObserver returns the extract.Observer that counts requests,
// retries, 429s and token requests.
func (m *Metrics) ClientObserver() extract.Observer { return clientObserver{m} }

type clientObserver struct{ m *Metrics }

func (o clientObserver) Request(endpoint string, status int) {
	o.m.requests.WithLabelValues(endpoint, extract.StatusClass(status)).Inc()
}
func (o clientObserver) Retry(string)       { o.m.retries.Inc() }
func (o clientObserver) RateLimited(string) { o.m.rateLimited.Inc() }
func (o clientObserver) TokenRequest()      { o.m.authRequests.Inc() }

// unixSeconds is t as a Prometheus timestamp gauge value; 0 for the zero
// time.
func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

// builder registers each collector it builds with one registry.
type builder struct{ r *prometheus.Registry }

func (p builder) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	p.r.MustRegister(c)
	return c
}

func (p builder) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	p.r.MustRegister(g)
	return g
}

func (p builder) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	p.r.MustRegister(c)
	return c
}

func (p builder) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	p.r.MustRegister(g)
	return g
}

func (p builder) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	p.r.MustRegister(h)
	return h
}

// knownTrigger bounds a trigger label: a value read from the warehouse that
// this binary does not know (written by another version) counts as "other".
func knownTrigger(t string) string {
	if slices.Contains(Triggers, t) {
		return t
	}
	return "other"
}
