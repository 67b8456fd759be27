package report

import (
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/cardsync/cardsync/account"
	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/load/sqlite"
	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/sim"
	"github.com/cardsync/cardsync/worker"
)

// simWarehouse is a warehouse built by real runs against the simulator on
// loopback: a backfill, then two cards changed, one removed and one added
// upstream and two more runs (the removal confirmed), with odd items
// (rejected) and a drifting account.
type simWarehouse struct {
	path    string
	srv     *sim.Server
	changed []string
	removed string
	runs    int
}

// yearSnapshots is a year of 15-minute snapshots.
const yearSnapshots = 365 * 96

// synthBalance is the balance of synthetic snapshot k, in cents: it wanders
// within 100.00 of 31337.07.
func synthBalance(k int) int64 { return 3133707 + int64((k*7919)%20001) - 10000 }

// buildWarehouse makes the warehouse at dir/w.db. With year set it first
// writes a year of synthetic history through the load API, as the worker
// would (a run and an account snapshot every 15 minutes, one run in 200
// failed, one in 150 rate limited), ending an hour before now; the
// simulator runs come after it.
func buildWarehouse(tb testing.TB, dir string, year bool) *simWarehouse {
	tb.Helper()
	ctx := tb.Context()
	path := filepath.Join(dir, "w.db")
	if year {
		clk := sim.NewClock()
		w, err := sqlite.Open(ctx, path, load.Options{Synchronous: "NORMAL", Now: clk.Now})
		if err != nil {
			tb.Fatal(err)
		}
		start := time.Now().UTC().Add(-time.Hour - yearSnapshots*15*time.Minute).Truncate(time.Minute)
		for k := range yearSnapshots {
			at := start.Add(time.Duration(k) * 15 * time.Minute)
			clk.Set(at)
			run, err := w.StartRun(ctx, load.TriggerSchedule, "test")
			if err != nil {
				tb.Fatal(err)
			}
			bal := money.FromMinor(synthBalance(k), 2)
			cards := money.FromMinor(9876540+int64(k%96)*100, 2)
			recharge := money.FromMinor(30, 2)
			applied := int64(300)
			if err := w.SaveAccount(ctx, run, load.Account{Snapshot: account.Snapshot{Balance: &bal, CardsBalance: &cards,
				AvailableRechargeBalance: &recharge, AppliedCardCount: &applied}}); err != nil {
				tb.Fatal(err)
			}
			clk.Set(at.Add(time.Duration(20+k%40) * time.Second))
			res := load.RunResult{Status: load.StatusSucceeded}
			if k%200 == 199 || k == yearSnapshots-1 {
				res = load.RunResult{Status: load.StatusFailed, Error: "fetch cards page 3: Get \"https://api.example.com/cards?page=3\": connection reset"}
			}
			if k%150 == 0 {
				res.RateLimited = 1
			}
			if err := w.FinishRun(ctx, run, res); err != nil {
				tb.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			tb.Fatal(err)
		}
	}

	srv := sim.New(sim.Options{Seed: 15, Cards: 120, OddData: true, AccountDrift: true,
		Window: time.Second, Limit: 10000, AuthLimit: 100})
	ts := httptest.NewServer(srv)
	tb.Cleanup(ts.Close)
	client, err := extract.New(extract.Config{
		BaseURL: ts.URL, Email: sim.DefaultEmail, Password: sim.DefaultPassword,
		RateLimit:     extract.Rate{N: 10000, Per: time.Second},
		AuthRateLimit: extract.Rate{N: 100, Per: time.Second},
		Timeout:       5 * time.Second, MaxWait: 2 * time.Second,
	})
	if err != nil {
		tb.Fatal(err)
	}
	lock, err := sqlite.OpenLock(path, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer lock.Close()
	wh, err := sqlite.Open(ctx, path, load.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer wh.Close()
	job := &worker.Job{Client: client, Warehouse: wh, Lock: lock, Version: "test"}
	sw := &simWarehouse{path: path, srv: srv}
	run := func() {
		tb.Helper()
		if _, err := job.Run(ctx, worker.TriggerBackfill, worker.Options{}); err != nil {
			tb.Fatal(err)
		}
		sw.runs++
	}
	run()
	var ordinary []sim.Card
	for _, c := range srv.Cards() {
		if c.Odd == "" {
			ordinary = append(ordinary, c)
		}
	}
	for _, c := range ordinary[:2] {
		srv.UpdateCard(c.ID)
		sw.changed = append(sw.changed, c.ID)
	}
	sw.removed = ordinary[5].ID
	srv.RemoveCard(sw.removed)
	srv.AddCard()
	run()
	run()
	return sw
}
