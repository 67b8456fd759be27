package metrics

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
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
	Changes = []string{"new", "changed", "returned", "unchanged", "removed", "rejected"}
	// WalkReasons are the values of cardsync_walks_inconsistent_total's
	// reason label: load.WalkReasons, and other for a reason this binary
	// does not know.
	WalkReasons = append(load.WalkReasons(), "other")
	// SkipReasons are the values of cardsync_runs_skipped_total's reason
	// label: the reasons worker.LeaseObserver.RunSkipped is told (another
	// value counts as other, which is not created at start-up).
	SkipReasons = []string{worker.SkipLeaseHeld, worker.SkipLocked, worker.SkipOverShare}
)

// DefaultHealthyWithin is Options.HealthyWithin's default: three runs of
// the default 15-minute schedule.
const DefaultHealthyWithin = 45 * time.Minute

// Warehouse is what Refresh reads: every load.Destination is one.
type Warehouse interface {
	Summary(ctx context.Context) (load.Summary, error)
}

// Options configure New. Zero fields take the documented defaults.
type Options struct {
	// Accounts are the names of the configured accounts: the values of
	// the account label, each created at 0 at start-up, and the accounts
	// /healthz judges (default: the one account load.DefaultAccount).
	Accounts []string
	// HealthyWithin is how old the last successful run may be while
	// /healthz answers 200 (default DefaultHealthyWithin).
	HealthyWithin time.Duration
	// Now is the clock of /healthz and of the run timestamps (default
	// time.Now).
	Now func() time.Time
	// Logger receives a line when a refresh fails (nil discards).
	Logger *slog.Logger
	// Warehouse is the warehouse's kind, cardsync_warehouse_info's kind
	// label: WarehouseSQLite (the default) or WarehousePostgres.
	Warehouse string
	// Build is what cardsync_build_info says of the binary (empty
	// fields: unknown; GoVersion: this program's Go release).
	Build BuildInfo
	// Commands builds the command /healthz names where to look next
	// (cardsync status, with the daemon's -config).
	Commands worker.CommandLine
}

// BuildInfo is which build is running: the labels of cardsync_build_info.
type BuildInfo struct {
	Version   string // release tag or commit (git describe)
	Revision  string // full commit hash
	GoVersion string // the Go release that compiled it
}

// The kinds of warehouse Options.Warehouse names.
const (
	WarehouseSQLite   = "sqlite"
	WarehousePostgres = "postgres"
)

// Metrics holds every series cardsync exports and the state /healthz
// judges. ClientObserver and RunObserver give the hooks extract and worker
// call, one of each per account. All methods are safe for concurrent use.
//
// Every series about runs, the API or an account's cards carries the label
// account (each account has its own runs, client, token and rows); the
// series about the warehouse file (its size, backups) and the
// configuration (healthy_within) are one for the process.
type Metrics struct {
	opts Options
	// families holds the cardsync_* collectors (the textfile writes only
	// these); runtime holds the Go and process collectors.
	families, runtime *prometheus.Registry

	// Labelled account (first), then as named.
	runs         *prometheus.CounterVec // trigger, status
	runDuration  *prometheus.HistogramVec
	lastRun      *prometheus.GaugeVec
	lastSuccess  *prometheus.GaugeVec
	failedInARow *prometheus.GaugeVec
	cards        *prometheus.GaugeVec   // state
	synced       *prometheus.CounterVec // change
	removalsHeld *prometheus.GaugeVec
	requests     *prometheus.CounterVec // endpoint, code
	retries      *prometheus.CounterVec
	rateLimited  *prometheus.CounterVec
	authRequests *prometheus.CounterVec
	snapshot     *prometheus.GaugeVec
	notStarted   *prometheus.CounterVec
	inconsistent *prometheus.CounterVec // reason
	inARow       *prometheus.GaugeVec
	leaseHeld    *prometheus.GaugeVec
	skipped      *prometheus.CounterVec // reason
	leasesLost   *prometheus.CounterVec

	// One for the process: the file and the configuration.
	warehouseBytes prometheus.Gauge
	flatStale      prometheus.Gauge
	backup         prometheus.Gauge
	backupFailure  prometheus.Gauge
	backupInterval prometheus.Gauge
	backupsOn      prometheus.Gauge
	backupsSince   prometheus.Gauge
	backups        *prometheus.CounterVec // result
	healthyWithin  prometheus.Gauge
	warehouseInfo  *prometheus.GaugeVec // kind

	mu     sync.Mutex
	health healthState
}

// backupFamilies are the series about serve's scheduled backups: the
// textfile leaves them out (a backfill takes no backups).
var backupFamilies = []string{
	"cardsync_backup_last_success_timestamp_seconds",
	"cardsync_backup_last_failure_timestamp_seconds",
	"cardsync_backup_interval_seconds",
	"cardsync_backups_configured",
	"cardsync_backups_configured_timestamp_seconds",
	"cardsync_backups_total",
}

// New builds the registries and creates every series at 0, every label
// combination and every account of opts.Accounts included, so a dashboard
// or an alert sees them before the first run.
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
	if opts.Warehouse == "" {
		opts.Warehouse = WarehouseSQLite
	}
	var accounts []string
	for _, a := range opts.Accounts {
		if a != "" && !slices.Contains(accounts, a) {
			accounts = append(accounts, a)
		}
	}
	if len(accounts) == 0 {
		accounts = []string{load.DefaultAccount}
	}
	opts.Accounts = accounts
	m := &Metrics{opts: opts, families: prometheus.NewRegistry(), runtime: prometheus.NewRegistry()}
	m.runtime.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := builder{m.families}
	m.runs = f.counterVec("cardsync_runs_total", "Runs that ended, by account, their sync_runs trigger and final status (abandoned: found left running by a dead process).", "account", "trigger", "status")
	m.runDuration = f.histogramVec("cardsync_run_duration_seconds", "How long runs took, from the lock to the recorded result, by account.",
		[]float64{1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400}, "account")
	m.lastRun = f.gaugeVec("cardsync_last_run_timestamp_seconds", "When the account's last run ended, whatever its status (unix seconds; 0: none yet).", "account")
	m.lastSuccess = f.gaugeVec("cardsync_last_success_timestamp_seconds", "When the account's last successful run ended (unix seconds; 0: none yet).", "account")
	m.failedInARow = f.gaugeVec("cardsync_runs_failed_in_a_row", "The account's failed and abandoned runs since its last success (an interrupted run is not a failure).", "account")
	m.cards = f.gaugeVec("cardsync_cards", "The account's cards in the warehouse: live (listed upstream) or removed.", "account", "state")
	m.synced = f.counterVec("cardsync_cards_synced_total", "Cards runs committed, by account and what the run found (rejected: items set aside in rejected_cards).", "account", "change")
	m.removalsHeld = f.gaugeVec("cardsync_removals_held", "Cards the mass-removal guard held back in the account's last finished walk.", "account")
	m.requests = f.counterVec("cardsync_requests_total", "HTTP attempts to the API by account, endpoint (token, account, cards) and status class (network: no answer).", "account", "endpoint", "code")
	m.retries = f.counterVec("cardsync_retries_total", "Attempts repeated after a transient failure (429, 5xx, network error, truncated body), by account.", "account")
	m.rateLimited = f.counterVec("cardsync_rate_limited_total", "429 answers from the API, by account; client-side pacing should keep this at 0.", "account")
	m.authRequests = f.counterVec("cardsync_auth_requests_total", "Token requests sent, by account.", "account")
	m.snapshot = f.gaugeVec("cardsync_account_snapshot_timestamp_seconds", "When the account's latest snapshot was taken (unix seconds; 0: none yet).", "account")
	m.notStarted = f.counterVec("cardsync_run_start_failures_total", "Runs that could not start (run lock, file check, run row), by account: no sync_runs row records them.", "account")
	m.inconsistent = f.counterVec("cardsync_walks_inconsistent_total", "Walks judged inconsistent (no removals marked; unread or wrong pages may leave cards stale), by account and reason: a page came back wrong (empty_page, repeated_page, short_page, fractional_pagination, phantom_pages, total_pages_changed) or the walk's counts did not add up (total_changed, duplicate_ids, count_mismatch, no_pages).", "account", "reason")
	m.inARow = f.gaugeVec("cardsync_walks_inconsistent_in_a_row", "The account's last walks judged inconsistent in a row, as the warehouse records them (by any replica; counted up to 2, the walks /healthz judges): /healthz is unhealthy at 2.", "account")
	m.leaseHeld = f.gaugeVec("cardsync_lease_held", "1 while this replica holds the account's lease on the shared (PostgreSQL) warehouse, during its runs and between them (a replica keeps the leases it holds), else 0; always 0 with SQLite (a file lock, no lease). Summed over the replicas it is 1 for every account someone holds.", "account")
	m.skipped = f.counterVec("cardsync_runs_skipped_total", "Scheduled runs of the account this replica did not start, by reason: lease_held (another replica holds the account's lease), locked (another process holds the account's run lock), over_share (this replica holds its share of the accounts while another live replica has room).", "account", "reason")
	m.leasesLost = f.counterVec("cardsync_leases_lost_total", "Times this replica lost the account's lease while it held it (a renewal refused, a commit fenced off, the TTL passed): another replica may take the account over.", "account")
	m.flatStale = f.gauge("cardsync_cards_flat_stale", "1 while the PostgreSQL warehouse's cards_flat view lags behind card_fields (a view built on it blocks a needed re-creation; see the log's warning), else 0.")
	m.warehouseBytes = f.gauge("cardsync_warehouse_bytes", "Size of the warehouse file and its WAL after the last run (of any account).")
	m.backup = f.gauge(backupFamilies[0], "When the last backup succeeded (unix seconds; 0: none, or backups not configured): at start-up the newest backup in the backup directory, then each scheduled backup serve takes.")
	m.backupFailure = f.gauge(backupFamilies[1], "When the last scheduled backup that failed started (unix seconds; 0: none since serve started, or backups not configured). Later than the last success: the backups fail.")
	m.backupInterval = f.gauge(backupFamilies[2], "The longest gap between two scheduled backups of [backup] cron (seconds; 0: backups not configured).")
	m.backupsOn = f.gauge(backupFamilies[3], "1 while serve takes scheduled backups ([backup] cron set), else 0.")
	m.backupsSince = f.gauge(backupFamilies[4], "Since when serve takes scheduled backups on its current [backup] cron (unix seconds; 0: backups not configured): the reload that turned them on or changed the cron or time zone; at start-up the newest backup in the backup directory, or the start when there is none. CardsyncBackupStale counts from the later of this and the last success.")
	m.backups = f.counterVec(backupFamilies[5], "Scheduled backups serve took, by result (succeeded, failed).", "result")
	for _, r := range []string{"succeeded", "failed"} {
		m.backups.WithLabelValues(r)
	}
	m.warehouseInfo = f.gaugeVec("cardsync_warehouse_info", "1, labelled with the warehouse's kind: sqlite (a file; serve may take its backups) or postgres (a shared database, backed up by the database's own tools).", "kind")
	m.warehouseInfo.WithLabelValues(opts.Warehouse).Set(1)
	m.healthyWithin = f.gauge("cardsync_healthy_within_seconds", "[metrics] healthy_within: how old an account's last success may be while /healthz answers 200.")
	m.healthyWithin.Set(opts.HealthyWithin.Seconds())
	f.gaugeVec("cardsync_build_info", "Always 1; its labels say which build runs: version (release tag or commit), revision (commit hash), goversion.",
		"version", "revision", "goversion").WithLabelValues(
		cmp.Or(opts.Build.Version, "unknown"), cmp.Or(opts.Build.Revision, "unknown"), cmp.Or(opts.Build.GoVersion, runtime.Version())).Set(1)
	m.health = healthState{started: opts.Now(), within: opts.HealthyWithin, accounts: map[string]*accountHealth{}}
	for _, a := range accounts {
		m.createAccount(a)
	}
	return m
}

// createAccount creates account's series at 0 and its health state; the
// caller holds no lock (New) or m.mu (accountHealth).
func (m *Metrics) createAccount(a string) {
	for _, t := range Triggers {
		for _, s := range Statuses {
			m.runs.WithLabelValues(a, t, s)
		}
	}
	m.runDuration.WithLabelValues(a)
	m.lastRun.WithLabelValues(a)
	m.lastSuccess.WithLabelValues(a)
	m.failedInARow.WithLabelValues(a)
	for _, s := range []string{"live", "removed"} {
		m.cards.WithLabelValues(a, s)
	}
	for _, c := range Changes {
		m.synced.WithLabelValues(a, c)
	}
	m.removalsHeld.WithLabelValues(a)
	for _, e := range extract.Endpoints() {
		for _, c := range extract.StatusClasses() {
			m.requests.WithLabelValues(a, e, c)
		}
	}
	m.retries.WithLabelValues(a)
	m.rateLimited.WithLabelValues(a)
	m.authRequests.WithLabelValues(a)
	m.snapshot.WithLabelValues(a)
	m.notStarted.WithLabelValues(a)
	for _, r := range WalkReasons {
		m.inconsistent.WithLabelValues(a, r)
	}
	m.inARow.WithLabelValues(a)
	m.leaseHeld.WithLabelValues(a)
	for _, r := range SkipReasons {
		m.skipped.WithLabelValues(a, r)
	}
	m.leasesLost.WithLabelValues(a)
	m.health.accounts[a] = &accountHealth{}
	if !slices.Contains(m.health.order, a) {
		m.health.order = append(m.health.order, a)
	}
}

// ensure creates account's series and health state if New was not told
// about it (a caller's mistake: its series then start at its first use).
func (m *Metrics) ensure(account string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.accountHealth(account)
}

// accountHealth returns account's health state, creating the account (its
// series at 0) if New was not told about it. The caller holds m.mu.
func (m *Metrics) accountHealth(account string) *accountHealth {
	h := m.health.accounts[account]
	if h == nil {
		m.createAccount(account)
		h = m.health.accounts[account]
	}
	return h
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

// RunFinished counts a run of account that ended: its trigger and status,
// the runs it found abandoned, its duration and cards, and the timestamps
// /healthz judges.
func (m *Metrics) RunFinished(account string, r worker.Result) { m.runFinished(account, r, true) }

// runFinished is RunFinished; with own false the run itself is not counted
// (its status, the last run and the failures in a row are left to the
// warehouse's facts): the warehouse does not record it as this replica
// saw it end (its lease was lost).
func (m *Metrics) runFinished(account string, r worker.Result, own bool) {
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.accountHealth(account)
	if own {
		m.runs.WithLabelValues(account, knownTrigger(r.Trigger), r.Status).Inc()
	}
	for _, t := range r.Abandoned {
		m.runs.WithLabelValues(account, knownTrigger(t), load.StatusAbandoned).Inc()
	}
	m.runDuration.WithLabelValues(account).Observe(r.Duration.Seconds())
	for c, n := range map[string]int{"new": r.New, "changed": r.Changed, "returned": r.Returned, "unchanged": r.Unchanged, "removed": r.Removed, "rejected": r.Rejected} {
		m.synced.WithLabelValues(account, c).Add(float64(n))
	}
	if r.WalkComplete {
		m.removalsHeld.WithLabelValues(account).Set(float64(r.RemovalsHeld))
		o := load.WalkOutcome{Outcome: "complete"}
		if !r.WalkConsistent {
			o = load.WalkOutcome{Outcome: "inconsistent", Reason: r.InconsistentReason, Pages: r.InconsistentPages}
			m.inconsistent.WithLabelValues(account, knownReason(r.InconsistentReason)).Inc()
		}
		h.walks = append([]load.WalkOutcome{o}, h.walks...)[:min(len(h.walks)+1, load.SummaryWalks)]
		m.inARow.WithLabelValues(account).Set(float64(inARow(h.walks)))
	}
	if !r.AccountSnapshotAt.IsZero() {
		m.snapshot.WithLabelValues(account).Set(unixSeconds(r.AccountSnapshotAt))
	}
	if !own {
		return
	}
	m.lastRun.WithLabelValues(account).Set(unixSeconds(now))
	h.lastRunStatus, h.lastRunAt, h.lastRunMark = r.Status, now, now
	if r.Status == load.StatusSucceeded {
		h.lastSuccess = now
		m.lastSuccess.WithLabelValues(account).Set(unixSeconds(now))
		m.failedInARow.WithLabelValues(account).Set(0)
	} else if r.Status == load.StatusFailed {
		// As load.Summary counts: failed and abandoned runs.
		m.failedInARow.WithLabelValues(account).Add(float64(1 + len(r.Abandoned)))
	}
}

// Refresh sets the gauges that describe an account in the warehouse from
// w's summary, under the summary's account (load.DefaultAccount when it
// names none): last run and last success (so a restart does not reset them
// to 0), the account snapshot, the cards, removals held, failures in a row,
// and the file size. serve calls it for each account at start-up;
// RunObserver after every run and at every schedule tick. A failed read
// changes nothing: the last known values stay.
func (m *Metrics) Refresh(ctx context.Context, w Warehouse) error {
	s, err := w.Summary(ctx)
	if err != nil {
		return fmt.Errorf("metrics refresh: %w", err)
	}
	m.apply(s)
	return nil
}

// apply sets the account's gauges and health state from its summary s; see
// Refresh.
func (m *Metrics) apply(s load.Summary) {
	account := cmp.Or(s.Account, load.DefaultAccount)
	m.mu.Lock()
	defer m.mu.Unlock()
	h := m.accountHealth(account)
	m.cards.WithLabelValues(account, "live").Set(float64(s.CurrentCards))
	m.cards.WithLabelValues(account, "removed").Set(float64(s.RemovedCards))
	m.removalsHeld.WithLabelValues(account).Set(float64(s.RemovalsHeld))
	m.failedInARow.WithLabelValues(account).Set(float64(s.FailuresInARow))
	m.warehouseBytes.Set(float64(s.DatabaseBytes + s.WALBytes))
	m.flatStale.Set(boolGauge(s.CardsFlatStale))
	if s.LastSnapshotAt != nil {
		m.snapshot.WithLabelValues(account).Set(unixSeconds(*s.LastSnapshotAt))
	}
	h.walks = slices.Clone(s.RecentWalks)
	m.inARow.WithLabelValues(account).Set(float64(inARow(h.walks)))
	for _, r := range s.Runs {
		if r.FinishedAt != nil {
			m.applyLastRun(account, h, r.Status, *r.FinishedAt)
			break
		}
	}
	if s.LastSuccessAt != nil && s.LastSuccessAt.After(h.lastSuccess.Truncate(time.Second)) {
		h.lastSuccess = *s.LastSuccessAt
		m.lastSuccess.WithLabelValues(account).Set(unixSeconds(*s.LastSuccessAt))
	}
}

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

func (p builder) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	p.r.MustRegister(g)
	return g
}

func (p builder) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	p.r.MustRegister(h)
	return h
}

// knownTrigger bounds a trigger label: a value read from the warehouse that
// this binary does not know (written by another version) counts as "other".
func knownReason(r string) string {
	if slices.Contains(WalkReasons, r) {
		return r
	}
	return "other"
}

func knownTrigger(t string) string {
	if slices.Contains(Triggers, t) {
		return t
	}
	return "other"
}

// boolGauge is a gauge's value for b: 1 or 0.
func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
