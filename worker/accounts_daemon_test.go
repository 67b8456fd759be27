package worker

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/sim"
)

// accountJob builds the Job of account in the warehouse at path against an
// in-memory simulator, for synctest; pacer, when set, is shared.
func accountJob(t *testing.T, tr *simTransport, log *slog.Logger, path, account string, pacer *extract.Pacer) *Job {
	t.Helper()
	rate, authRate := extract.Rate{N: 1000, Per: time.Second}, extract.Rate{N: 100, Per: time.Second}
	client, err := extract.New(extract.Config{
		BaseURL: "http://127.0.0.1:1", Email: sim.DefaultEmail, Password: sim.DefaultPassword,
		RateLimit: rate, AuthRateLimit: authRate, Pacer: pacer,
		Timeout: 5 * time.Second, MaxWait: 30 * time.Second, Transport: tr,
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(t.Context(), path, load.Options{Account: account, BusyTimeout: time.Minute}, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st.Job(client, log.With("account", account), JobOptions{Version: "test"})
}

// TestDaemonAccountsAreIndependent: three accounts of one file on a
// 5-minute schedule for an hour. alpha is healthy; beta's first run hangs
// on a request deaf to its context; gamma's upstream refuses every walk.
// alpha still runs on every slot (start-up + 12), all succeeded, and gamma
// fails on every slot: neither waits for the other nor for beta, whose
// one run is never doubled. The stuck run stops the watchdog; a stop waits
// StopTimeout for beta and says so.
func TestDaemonAccountsAreIndependent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		log := slog.New(slog.NewJSONHandler(rec, nil))
		path := filepath.Join(t.TempDir(), "w.db")
		opts := sim.Options{Seed: 41, Cards: 30, Window: time.Second, Limit: 1000, AuthLimit: 100}
		alpha := accountJob(t, &simTransport{srv: sim.New(opts)}, log, path, "alpha", nil)
		block := make(chan struct{})
		betaTr := &simTransport{srv: sim.New(opts), block: block}
		beta := accountJob(t, betaTr, log, path, "beta", nil)
		gammaSrv := sim.New(opts)
		gammaSrv.InjectFault(sim.Fault{Endpoint: sim.EndpointCards, Kind: sim.FaultStatus, Status: 403})
		gamma := accountJob(t, &simTransport{srv: gammaSrv}, log, path, "gamma", nil)
		d := &Daemon{Jobs: []*Job{alpha, beta, gamma}, Schedule: every(5 * time.Minute), RunOnStart: true, RunTimeout: 24 * time.Hour,
			Logger: log, Notify: rec.notify, Watchdog: 10 * time.Second, StopTimeout: 5 * time.Second}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- d.Run(ctx) }()
		time.Sleep(time.Hour + time.Minute)
		synctest.Wait()
		pings := rec.count("WATCHDOG=1")
		cancel()
		if err := <-done; err == nil || !strings.Contains(err.Error(), "account beta") {
			t.Errorf("Run: %v, want beta's run that did not stop", err)
		}
		close(block) // let beta's stuck request end so the bubble can
		synctest.Wait()

		ar := runs(t, alpha)
		if len(ar) != 13 {
			t.Fatalf("alpha: %d runs in an hour, want 13 (start-up + 12 scheduled)", len(ar))
		}
		for _, r := range ar {
			if r.Status != load.StatusSucceeded {
				t.Errorf("alpha run %d: %s %s", r.ID, r.Status, r.Error)
			}
			if off := r.StartedAt.Sub(start).Truncate(time.Second); off%(5*time.Minute) != 0 {
				t.Errorf("alpha run %d started at +%v, not on a 5-minute slot", r.ID, off)
			}
		}
		gr := runs(t, gamma)
		if len(gr) != 13 {
			t.Errorf("gamma: %d runs in an hour, want 13", len(gr))
		}
		for _, r := range gr {
			if r.Status != load.StatusFailed {
				t.Errorf("gamma run %d: %s, want failed", r.ID, r.Status)
			}
		}
		if br := runs(t, beta); len(br) != 1 {
			t.Errorf("beta: %d runs, want its one stuck run", len(br))
		}
		// The watchdog is fed while beta's request may still be in flight
		// (its 5 s timeout plus a commit's worth), then no more.
		if maxPings := int((commitTimeout + 10*time.Second) / (10 * time.Second)); pings == 0 || pings > maxPings {
			t.Errorf("%d watchdog pings with beta stuck, want 1 to %d", pings, maxPings)
		}
		if rec.count("READY=1") != 1 || rec.count("STOPPING=1") != 1 {
			t.Errorf("notify states: want READY=1 and STOPPING=1 once, got %d and %d", rec.count("READY=1"), rec.count("STOPPING=1"))
		}
	})
}

// TestDaemonAccountsReload: a reload applies to every account from its
// next slot on; one that adds or removes an account is refused.
func TestDaemonAccountsReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		log := slog.New(slog.NewJSONHandler(rec, nil))
		path := filepath.Join(t.TempDir(), "w.db")
		opts := sim.Options{Seed: 42, Cards: 10, Window: time.Second, Limit: 1000, AuthLimit: 100}
		pacer := extract.NewPacer(extract.Rate{N: 1000, Per: time.Second}, extract.Rate{N: 100, Per: time.Second}, nil)
		a := accountJob(t, &simTransport{srv: sim.New(opts)}, log, path, "a", pacer)
		b := accountJob(t, &simTransport{srv: sim.New(opts)}, log, path, "b", pacer)
		hup := make(chan struct{}, 1)
		var next Config
		d := &Daemon{Jobs: []*Job{a, b}, Schedule: every(time.Hour), RunTimeout: time.Hour, Logger: log, Hup: hup,
			Reload: func(context.Context) (Config, error) { return next, nil }}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		synctest.Wait()
		next = Config{Jobs: []*Job{a}, Schedule: every(time.Minute)}
		hup <- struct{}{}
		synctest.Wait()
		if !strings.Contains(rec.text(), "adding, removing or renaming an account needs a restart") {
			t.Errorf("a reload without account b was not refused:\n%s", rec.text())
		}
		next = Config{Jobs: []*Job{a, b}, Schedule: every(10 * time.Minute), Changes: "schedule.cron"}
		hup <- struct{}{}
		time.Sleep(30*time.Minute + time.Second)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if na, nb := len(runs(t, a)), len(runs(t, b)); na != 3 || nb != 3 {
			t.Errorf("runs in 30 minutes of a 10-minute schedule: a %d, b %d; want 3 each", na, nb)
		}
	})
}

// TestDaemonAccountsRefuseDuplicates: two jobs of one account would walk
// it twice at once.
func TestDaemonAccountsRefuseDuplicates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	tr := &simTransport{srv: sim.New(sim.Options{Seed: 43, Cards: 10})}
	a := accountJob(t, tr, slog.New(slog.DiscardHandler), path, "a", nil)
	d := &Daemon{Jobs: []*Job{a, a}, Schedule: every(time.Hour)}
	if err := d.Run(t.Context()); err == nil || !strings.Contains(err.Error(), `account "a" has two jobs`) {
		t.Errorf("Run with two jobs of one account: %v", err)
	}
}

// TestDaemonAccountsReloadKeepsPhase: with several accounts too, reloads
// that leave the schedule alone never move the accounts' slots.
func TestDaemonAccountsReloadKeepsPhase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		log := slog.New(slog.NewJSONHandler(rec, nil))
		path := filepath.Join(t.TempDir(), "w.db")
		opts := sim.Options{Seed: 42, Cards: 10, Window: time.Second, Limit: 1000, AuthLimit: 100}
		pacer := extract.NewPacer(extract.Rate{N: 1000, Per: time.Second}, extract.Rate{N: 100, Per: time.Second}, nil)
		a := accountJob(t, &simTransport{srv: sim.New(opts)}, log, path, "a", pacer)
		b := accountJob(t, &simTransport{srv: sim.New(opts)}, log, path, "b", pacer)
		hup := make(chan struct{}, 1)
		d := &Daemon{Jobs: []*Job{a, b}, Schedule: cron.Every(time.Minute), RunTimeout: time.Hour, Logger: log, Hup: hup,
			Reload: func(context.Context) (Config, error) { return Config{Jobs: []*Job{a, b}, Changes: "log.level"}, nil }}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		for range 15 {
			time.Sleep(40 * time.Second)
			hup <- struct{}{}
			synctest.Wait()
		}
		time.Sleep(20 * time.Second)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if na, nb := len(runs(t, a)), len(runs(t, b)); na != 10 || nb != 10 {
			t.Errorf("runs in 10 minutes of @every 1m with a reload every 40 s: a %d, b %d; want 10 each", na, nb)
		}
	})
}

// TestDaemonAccountsBackupBetweenRuns: with several accounts too, a backup
// is taken between runs. b's start-up run hangs until +25m: the backup due
// at +10m waits for it, a's run due at +15m waits for the backup (neither
// is skipped), and no backup ever overlaps a run of either account.
func TestDaemonAccountsBackupBetweenRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := slog.New(slog.DiscardHandler)
		path := filepath.Join(t.TempDir(), "w.db")
		opts := sim.Options{Seed: 44, Cards: 10, Window: time.Second, Limit: 1000, AuthLimit: 100}
		a := accountJob(t, &simTransport{srv: sim.New(opts)}, log, path, "a", nil)
		block := make(chan struct{})
		b := accountJob(t, &simTransport{srv: sim.New(opts), block: block}, log, path, "b", nil)
		var k takes
		d := &Daemon{Jobs: []*Job{a, b}, Schedule: every(15 * time.Minute), RunOnStart: true, RunTimeout: time.Hour, Logger: log}
		d.Backups = &Backups{Schedule: every(10 * time.Minute), Take: func(ctx context.Context, now time.Time) (load.BackupResult, error) {
			k.record(d, now)
			return load.BackupResult{Path: "backup.db"}, nil
		}}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- d.Run(ctx) }()
		time.Sleep(25 * time.Minute)
		synctest.Wait()
		if n := len(k.times()); n != 0 {
			t.Fatalf("%d backups while b's run hung", n)
		}
		if n := len(runs(t, a)); n != 1 {
			t.Errorf("a: %d runs by +25m, want 1: its +15m run waits for the backup due at +10m", n)
		}
		close(block)
		synctest.Wait()
		at := k.times()
		if len(at) != 1 || at[0].Sub(start) < 25*time.Minute || at[0].Sub(start) > 26*time.Minute {
			t.Errorf("backups at %v, want one right after b's run ended at +25m", at)
		}
		ar := runs(t, a)
		if len(ar) != 2 || len(at) == 1 && ar[0].StartedAt.Before(at[0]) {
			t.Errorf("a: runs %+v, want its held-back run right after the backup at %v", ar, at)
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		if k.overlap != 0 {
			t.Errorf("%d backups during a run", k.overlap)
		}
		if n := len(k.times()); n != 2 {
			t.Errorf("%d backups by +35m, want 2 (the one the run delayed, then the +30m slot)", n)
		}
		if na, nb := len(runs(t, a)), len(runs(t, b)); na != 3 || nb != 2 {
			t.Errorf("runs by +35m: a %d, b %d; want 3 (0, 25, 30) and 2 (0, 30)", na, nb)
		}
	})
}

// TestDaemonStatusNamesAccounts: STATUS= lines name the account when the
// accounts have names of their own, even one; the one default account's
// lines read as they always did.
func TestDaemonStatusNamesAccounts(t *testing.T) {
	for _, tt := range []struct {
		accounts []string
		want     string
	}{
		{[]string{load.DefaultAccount}, "STATUS=idle; next run "},
		{[]string{"acme"}, "STATUS=account acme: idle; next run "},
		{[]string{"acme", "globex"}, "STATUS=account globex: idle; next run "},
	} {
		t.Run(strings.Join(tt.accounts, ","), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{}
				log := slog.New(slog.DiscardHandler)
				path := filepath.Join(t.TempDir(), "w.db")
				var jobs []*Job
				for _, name := range tt.accounts {
					jobs = append(jobs, accountJob(t, &simTransport{srv: sim.New(sim.Options{Seed: 45, Cards: 10})}, log, path, name, nil))
				}
				d := &Daemon{Jobs: jobs, Schedule: every(time.Hour), RunTimeout: time.Hour, Logger: log, Notify: rec.notify}
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- d.Run(ctx) }()
				synctest.Wait()
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				found := false
				for _, s := range rec.states {
					found = found || strings.HasPrefix(s, tt.want)
				}
				if !found {
					t.Errorf("STATUS lines %q, want one starting %q", rec.states, tt.want)
				}
			})
		})
	}
}
