package extract

import (
	"bytes"
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
