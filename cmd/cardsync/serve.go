package main

import (
	"cmp"
	"context"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/dialect"
	"github.com/cardsync/cardsync/metrics"
	"github.com/cardsync/cardsync/worker"
)

const serveUsage = `
Usage: cardsync serve [flags]

Runs the daemon: syncs on the [schedule] cron (5 fields, or "@every 15m"),
in [schedule] timezone, never two runs at once, plus one run at start when
[schedule] run_on_start is true. Under systemd (Type=notify) it reports
READY=1, STATUS=, STOPPING=1 and feeds the watchdog while it makes progress.

Signals: SIGTERM or SIGINT stops the scheduler, commits the pages already
fetched (with their checkpoint), records the run as interrupted and exits 0 (a second one exits at
once). SIGHUP re-reads the configuration (file, CARDSYNC_* environment,
flags) and uses it from the next run on; an invalid file keeps the current
configuration and logs why. [warehouse] changes and [metrics] listen need
a restart.

With [warehouse] url (PostgreSQL), several serve processes may share the
database: each keeps the leases of its share of the accounts ([cluster]
lease_ttl), so an account stays with one replica, and a dead replica's are
taken and run by another within lease_ttl + 2s. Two live processes with one
[cluster] holder: the second is refused at start (exit 4).

With [metrics] listen set ("127.0.0.1:9464"), it serves /metrics
(Prometheus; with [[accounts]], each account's series under its account
label) and /healthz (200 while every account's last successful run is younger
than [metrics] healthy_within, else 503 naming the account and the reason).

Examples:
  cardsync serve -config /etc/cardsync/config.toml
  CARDSYNC_SCHEDULE_CRON='@every 5m' cardsync serve -config cardsync.toml
  systemctl reload cardsync    # after editing /etc/cardsync/config.toml
`

func (m *Main) runServe(ctx context.Context, args []string) error {
	fs := m.newFlagSet("serve", serveUsage)
	var cf commonFlags
	cf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	s, err := m.settings(cf, true)
	if err != nil {
		return err
	}
	sv, err := m.composeServe(ctx, cf, s)
	defer sv.close()
	if err != nil {
		// What keeps the daemon from starting (the warehouse, a PostgreSQL
		// role) is said with its fix, in the journal.
		return fixer{command: "serve", s: s, cl: m.commandLine(cf)}.withFix(err)
	}
	hup, stopHup := m.hupRequests()
	defer stopHup()
	d := &worker.Daemon{
		Jobs:       sv.jobs(s, sv.log),
		Schedule:   inLocation{s.Schedule, s.Location},
		RunOnStart: s.RunOnStart,
		RunTimeout: s.RunTimeout,
		Logger:     sv.log,
		Notify:     sv.notify.Send,
		Watchdog:   sv.notify.WatchdogInterval(),
		Hup:        hup,
		Backups:    backups(s, sv.path(), sv.met),
		Reload:     sv.reload,
	}
	build := thisBuild()
	sv.log.Info("cardsync serving", "version", build.Version, "revision", build.Revision, "schedule", s.CronSpec, "timezone", s.Location.String(),
		"next_run", d.FirstRun(time.Now()).UTC().Format(time.RFC3339), "warehouse", warehouseName(s), "api", apiURLs(s),
		"run_on_start", s.RunOnStart)
	if s.WarehouseURL != "" {
		sv.log.Info("sharing the PostgreSQL warehouse: this replica keeps the leases of its share of the accounts", "holder", s.Holder, "lease_ttl", s.LeaseTTL)
	}
	if err := d.Run(ctx); err != nil {
		return &worker.LoggedError{Err: err}
	}
	sv.log.Info("stopped cleanly")
	return nil
}

// server is what serve composes from the settings for its daemon, and
// what a reload rebuilds.
type server struct {
	m   *Main
	ctx context.Context // serve's: a stop cancels the report refreshes
	cf  commonFlags
	log *slog.Logger
	// notify sends sd_notify states (nothing outside systemd).
	notify *notifier
	// met exists only when metrics are served; the hooks stay nil otherwise.
	met *metrics.Metrics
	// stores are one per account: its run lock's descriptor and its
	// warehouse handle stay open for the daemon's life (worker.OpenStore);
	// each run takes and releases its account's lock.
	stores  []*worker.Store
	clients []*extract.Client
	// refreshes are the report refreshes running in the background; the
	// stop waits for them.
	refreshes []*reportRefresh
	// current is the configuration in use (the last reload's).
	current config.Settings
	// closers undo the composition, last first.
	closers []func()
}

// composeServe opens each account's store, builds the API clients and,
// with [metrics] listen, serves the metrics. The server it returns is
// closed by its caller, even with an error.
func (m *Main) composeServe(ctx context.Context, cf commonFlags, s config.Settings) (*server, error) {
	log := m.logger(s)
	sv := &server{m: m, ctx: ctx, cf: cf, log: log, notify: newNotifier(m.Getenv), current: s}
	if s.MetricsListen != "" {
		sv.met = metrics.New(metrics.Options{Accounts: accountNameList(s.Accounts), HealthyWithin: s.HealthyWithin, Logger: log, Warehouse: warehouseKind(s), Build: thisBuild().metrics(),
			Commands: m.commandLine(cf)})
	}
	// The accounts' commits to one file take turns in this process.
	turns := load.NewWriteTurns()
	// The accounts on one PostgreSQL database share one pool: the process
	// holds at most [warehouse] max_connections whatever their number.
	pools := dialect.NewPools(s.PoolConns(len(s.Accounts)))
	for _, a := range s.Accounts {
		st, err := openAccountStore(ctx, s, a.Name, accountLogger(s, log, a.Name), false, turns, pools)
		if err != nil {
			log.Error("cannot start: the warehouse cannot be opened", "account", a.Name, "err", err)
			return sv, &worker.LoggedError{Err: err}
		}
		sv.closers = append(sv.closers, func() { st.Close() })
		sv.stores = append(sv.stores, st)
	}
	var err error
	if sv.clients, err = accountClients(s, log, sv.met); err != nil {
		return sv, err
	}
	if sv.met != nil {
		backupMetrics(ctx, s, nil, sv.path(), sv.met, time.Now())
		stop, err := serveMetrics(ctx, sv.met, sv.stores, s.MetricsListen, log)
		if err != nil {
			log.Error("cannot start: [metrics] listen", "err", err)
			return sv, &worker.LoggedError{Err: err}
		}
		sv.closers = append(sv.closers, stop)
	}
	sv.closers = append(sv.closers, func() {
		for _, r := range sv.refreshes {
			r.wait()
		}
	})
	return sv, nil
}

// close waits for the report refreshes, stops the metrics server and
// closes the stores.
func (sv *server) close() {
	for i := len(sv.closers) - 1; i >= 0; i-- {
		sv.closers[i]()
	}
}

// path is the warehouse file open (the first account's store's; all share
// it), for backups and the report.
func (sv *server) path() string { return sv.stores[0].Warehouse.Path() }

// jobs builds the job of each account of s, logging to log.
func (sv *server) jobs(s config.Settings, log *slog.Logger) []*worker.Job {
	report := asObserver(reportObserver(sv.ctx, s, sv.path(), log), &sv.refreshes)
	jobs := make([]*worker.Job, len(s.Accounts))
	// Several accounts: a walk fetches on while its commit waits (for its
	// turn on a file, for the server's WAL flush), so each keeps its pace.
	ahead := 0
	if len(s.Accounts) > 1 {
		ahead = worker.DefaultFetchAhead
	}
	for i, a := range s.Accounts {
		status := "STATUS=" + accountPrefix(s, a.Name)
		jobs[i] = sv.stores[i].Job(sv.clients[i], accountLogger(s, log, a.Name), worker.JobOptions{
			Version:        thisBuild().Version,
			AuditRetention: s.PageAuditRetention,
			FieldRetention: s.FieldRetention,
			Status:         func(st string) { _ = sv.notify.Send(status + st) },
			Observer:       worker.Observers{runObserver(sv.met, sv.stores[i]), report},
			FetchAhead:     ahead,
			Commands:       accountCommandLine(s, sv.m.commandLine(sv.cf), a.Name),
		})
	}
	return jobs
}

// reload re-reads the configuration (SIGHUP) and builds what the daemon
// uses from the next run on. Adding, removing or renaming an account is
// refused; the keys that need a restart are named and left alone.
func (sv *server) reload(ctx context.Context) (worker.Config, error) {
	next, err := sv.m.settings(sv.cf, true)
	if err != nil {
		return worker.Config{}, err
	}
	changes, restart := next.Changes(sv.current)
	nlog := sv.m.logger(next)
	if err := next.CheckAccounts(sv.current); err != nil {
		return worker.Config{}, err
	}
	if next.APIChanged(sv.current) {
		if sv.clients, err = accountClients(next, nlog, sv.met); err != nil {
			return worker.Config{}, err
		}
	}
	if sv.met != nil {
		sv.met.SetHealthyWithin(next.HealthyWithin)
		backupMetrics(ctx, next, &sv.current, sv.path(), sv.met, time.Now())
	}
	if len(restart) > 0 {
		nlog.Warn("these keys changed but need a restart to take effect", "keys", restart)
	}
	cfg := worker.Config{Backups: backups(next, sv.path(), sv.met),
		RunTimeout: next.RunTimeout, Logger: nlog, Changes: strings.Join(changes, ", ")}
	if next.ScheduleChanged(sv.current) {
		// A new schedule starts from the reload; an unchanged one keeps
		// the next run where it was.
		cfg.Schedule = inLocation{next.Schedule, next.Location}
	}
	sv.current = next
	cfg.Jobs = sv.jobs(next, nlog)
	return cfg, nil
}

// hupRequests returns serve's reload requests: m.Hup, or SIGHUP when m
// handles signals (nil: none). stop stops listening for SIGHUP.
func (m *Main) hupRequests() (hup <-chan struct{}, stop func()) {
	if m.Hup != nil || !m.Signals {
		return m.Hup, func() {}
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	fwd := make(chan struct{}, 1)
	go func() {
		for range ch {
			select {
			case fwd <- struct{}{}:
			default:
			}
		}
	}()
	return fwd, func() { signal.Stop(ch) }
}

// serveMetrics seeds met from each account's store (so a restart does not
// report the last success as never) and serves /metrics and /healthz on
// addr. stop shuts the listener down, waiting up to 5 s for scrapes in
// progress.
func serveMetrics(ctx context.Context, met *metrics.Metrics, stores []*worker.Store, addr string, log *slog.Logger) (stop func(), err error) {
	for _, st := range stores {
		if err := met.Refresh(ctx, st.Warehouse); err != nil {
			log.Warn("metrics: cannot seed the gauges from the warehouse; they start at 0", "account", st.Warehouse.Account(), "err", err)
		}
	}
	srv, err := metrics.Listen(addr, met.Handler(), log)
	if err != nil {
		return nil, err
	}
	attrs := []any{"addr", srv.Addr().String()}
	if !config.IsLoopbackListen(addr) {
		log.Warn("metrics served beyond loopback: anyone who can reach the address sees the sync's state", attrs...)
	} else {
		log.Info("metrics served", attrs...)
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			log.Warn("metrics server did not stop cleanly", "err", err)
		}
	}, nil
}

// accountClients builds one API client per account of s, each with its own
// token, paced with its rate_group, observed by met (nil: no metrics).
func accountClients(s config.Settings, log *slog.Logger, met *metrics.Metrics) ([]*extract.Client, error) {
	pacers := groupPacers(s.Accounts)
	clients := make([]*extract.Client, len(s.Accounts))
	for i, a := range s.Accounts {
		c, err := newAccountClient(s, a, pacers, accountLogger(s, log, a.Name), nil, clientObserver(met, a.Name))
		if err != nil {
			return nil, err
		}
		clients[i] = c
	}
	return clients, nil
}

// apiURLs is the base URL of each account, for the start line: NAME=URL
// for named accounts, the URL alone for the [api] table's one account.
func apiURLs(s config.Settings) string {
	u := make([]string, len(s.Accounts))
	for i, a := range s.Accounts {
		u[i] = accountText(s, a.Name+"=", "") + a.BaseURL
	}
	return strings.Join(u, " ")
}

// backups is serve's backup plan for the warehouse at path (the one open,
// even after a reload names another: [warehouse] path needs a restart):
// [backup] cron, dir and keep, each result told to the metrics. Without a
// cron it is an empty plan (no backups).
func backups(s config.Settings, path string, met *metrics.Metrics) *worker.Backups {
	if s.BackupSchedule == nil {
		return &worker.Backups{}
	}
	b := worker.WarehouseBackups(inLocation{s.BackupSchedule, s.Location}, path, s.BackupDir, s.BackupKeep)
	if met != nil {
		b.OnSuccess = func(_ string, at time.Time) { met.BackupSucceeded(at) }
		b.OnFailure = func(_ error, at time.Time) { met.BackupFailed(at) }
	}
	return b
}

// backupInterval is the longest gap between two backups of s's [backup]
// cron (as healthy_within's default reads [schedule] cron); 0 without one.
func backupInterval(s config.Settings, now time.Time) time.Duration {
	if s.BackupSchedule == nil {
		return 0
	}
	return config.ScheduleInterval(s.BackupSchedule, now.In(s.Location))
}

// backupMetrics tells met about s's scheduled backups, at start-up (old
// nil) and at each reload (old: the settings before it): whether serve
// takes them and how often (cardsync_backups_configured,
// cardsync_backup_interval_seconds; off, the last success and failure read
// 0 too), and since when on this schedule
// (cardsync_backups_configured_timestamp_seconds), which CardsyncBackupStale
// counts from when it is later than the last success. A reload that turns
// backups on or changes their cron or time zone sets it to now: the new
// schedule has had no chance to run yet. At start-up it is the newest
// backup in the directory (the schedule is taken to have been in place
// then, so a restart does not reset the count), else now. When backups were
// off before (always at start-up) the last success is also read from the
// newest backup in the directory, so a restarted daemon does not report
// backups as stale (or as fresh) before its first one. Without [backup]
// cron the last success stays 0: a manual backup long ago must not raise an
// alert.
func backupMetrics(ctx context.Context, s config.Settings, old *config.Settings, path string, met *metrics.Metrics, now time.Time) {
	if s.BackupSchedule == nil {
		met.SetBackupSchedule(0, time.Time{})
		return
	}
	wasOn := old != nil && old.BackupSchedule != nil
	var newest time.Time
	if !wasOn {
		newest = newestBackup(ctx, s, path)
		if !newest.IsZero() {
			met.SetLastBackup(newest)
		}
	}
	var since time.Time // zero: the schedule is unchanged, keep its time
	switch {
	case old == nil && !newest.IsZero():
		since = newest
	case !wasOn || backupScheduleChanged(*old, s):
		since = now
	}
	met.SetBackupSchedule(backupInterval(s, now), since)
}

// newestBackup is when the newest backup of the warehouse at path in s's
// backup directory was written; the zero time when there is none. Only a
// file with this warehouse's identity counts: another warehouse's backup
// of the same file name in a shared directory, or a stray file named like
// one, would otherwise pass for a fresh backup and silence
// CardsyncBackupStale.
func newestBackup(ctx context.Context, s config.Settings, path string) time.Time {
	dir := cmp.Or(s.BackupDir, dialect.DefaultBackupDir(path))
	p, err := dialect.NewestOwnBackup(ctx, dir, path)
	if err != nil || p == "" {
		return time.Time{}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// backupScheduleChanged reports whether a reload from old to s changes when
// backups are due: the [backup] cron or the time zone it is read in.
func backupScheduleChanged(old, s config.Settings) bool {
	return old.BackupCron != s.BackupCron || old.Location.String() != s.Location.String()
}

// warehouseKind is s's warehouse for cardsync_warehouse_info.
func warehouseKind(s config.Settings) string {
	if s.WarehouseURL != "" {
		return metrics.WarehousePostgres
	}
	return metrics.WarehouseSQLite
}
