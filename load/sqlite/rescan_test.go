package sqlite

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/redact"
)

// cancelOn is a log handler that cancels when a line's message holds msg.
type cancelOn struct {
	slog.Handler
	msg    string
	cancel context.CancelFunc
}

func (h cancelOn) Enabled(context.Context, slog.Level) bool { return true }

func (h cancelOn) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.msg) {
		h.cancel()
	}
	return nil
}

// TestRescanWaitsForTheRun: while a run holds the account's run lock, a
// rescan's batch waits for it (and writes nothing); interrupted while it
// waits, it leaves the warehouse as it was.
func TestRescanWaitsForTheRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	log := slog.New(cancelOn{Handler: slog.DiscardHandler, msg: "rescan waits", cancel: cancel})
	w, path, _ := openTest(t, load.Options{Logger: log})
	// The newer rules drop brand.
	policy := load.Options{RedactFields: []string{"brand"}}.Settings().Policy
	run := startRun(t, w)
	commit(t, w, run, page(1, idRange(1, 5), 1, 5))
	if _, err := w.db.ExecContext(ctx, `UPDATE rules_state SET rules_version = 1`); err != nil {
		t.Fatal(err)
	}
	before := queryString(t, w, `SELECT group_concat(data, '') FROM card_state`)
	lock, err := OpenAccountLock(path, 0o640, load.DefaultAccount)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := lock.Acquire(); err != nil {
		t.Fatal(err)
	}
	_, err = load.Rescan(ctx, w, load.RescanOptions{Policy: policy})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Rescan beside a held run lock = %v, want it waiting until cancelled", err)
	}
	if after := queryString(t, w, `SELECT group_concat(data, '') FROM card_state`); after != before {
		t.Error("a rescan wrote while the run held the lock")
	}
	st, err := w.RulesState(t.Context())
	if err != nil || st.Version != 1 {
		t.Errorf("rules state %+v, %v; want version 1", st, err)
	}
	// The run ends: the rescan goes through.
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	res, err := load.Rescan(t.Context(), w, load.RescanOptions{Policy: policy})
	if err != nil || res.Changed[load.PhaseCards] != 5 || res.Version != redact.RulesVersion {
		t.Fatalf("Rescan after the run = %+v, %v; want 5 cards changed", res, err)
	}
	if after := queryString(t, w, `SELECT group_concat(data, '') FROM card_state`); strings.Contains(after, `"brand"`) {
		t.Error("brand left after the rescan")
	}
}
