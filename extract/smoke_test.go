package extract

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cardsync/cardsync/money"
	"github.com/cardsync/cardsync/sim"
)

func TestWalkMatchesSim(t *testing.T) {
	e := newEnv(t, sim.Options{Seed: 1, Cards: 100}, nil)
	pages, err := walk(t, e.c, 1)
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	want := e.sim.Cards()
	var got []Card
	for _, p := range pages {
		got = append(got, p.Cards...)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d cards, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || !bytes.Equal(got[i].Raw, want[i].JSON()) {
			t.Fatalf("card %d: got %s %s, want %s %s", i, got[i].ID, got[i].Raw, want[i].ID, want[i].JSON())
		}
	}
	acct, err := e.c.Account(t.Context())
	if err != nil {
		t.Fatalf("account: %v", err)
	}
	wantBal, err := money.Parse(*e.sim.Account().Balance, 2)
	if err != nil {
		t.Fatal(err)
	}
	if acct.Balance == nil || *acct.Balance != wantBal {
		t.Errorf("balance %v, want %v", acct.Balance, wantBal)
	}
	st := e.c.Stats()
	t.Logf("stats %+v sim %+v", st, e.sim.Stats())
}

// TestGateStopsRequests: a client with a failing gate sends nothing (the
// simulator sees no request) and fails with the gate's error, not retried;
// the same client without the gate works.
func TestGateStopsRequests(t *testing.T) {
	e := newEnv(t, sim.Options{Seed: 3, Cards: 20}, nil)
	lost := errors.New("lease lost")
	calls := 0
	gated := e.c.WithGate(func() error { calls++; return lost })
	if err := gated.Authenticate(t.Context()); !errors.Is(err, lost) {
		t.Fatalf("Authenticate through a failing gate: %v, want the gate's error", err)
	}
	if calls != 1 {
		t.Errorf("gate called %d times, want 1 (no retry)", calls)
	}
	if n := e.sim.Stats().Requests; len(n) != 0 {
		t.Fatalf("the simulator saw requests through a failing gate: %v", n)
	}
	if err := e.c.Authenticate(t.Context()); err != nil {
		t.Fatalf("without the gate: %v", err)
	}
	if n := e.sim.Stats().Requests["token"]; n != 1 {
		t.Fatalf("the simulator saw %d token requests without the gate, want 1", n)
	}
}
