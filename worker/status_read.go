package worker

import (
	"context"

	"github.com/cardsync/cardsync/load"
)

// ReadStatusFacts reads the status facts of the account wh is opened for
// (dialect.OpenReadOnly): its summary, its rules version and who writes
// it (load.Reader.WriterFacts): on a shared PostgreSQL database the
// account's lease, which says who syncs; in a SQLite file the file's
// writer and the warehouses restore kept beside it. sole says the account
// is the [api] table's only one (its older writers lock the whole file).
func ReadStatusFacts(ctx context.Context, wh load.Reader, account string, sole bool) (StatusFacts, error) {
	sum, err := wh.Summary(ctx)
	if err != nil {
		return StatusFacts{}, err
	}
	facts := StatusFacts{Summary: sum}
	st, err := wh.RulesState(ctx)
	if err != nil {
		return StatusFacts{}, err
	}
	facts.RulesVersion = st.Version
	w, err := wh.WriterFacts(ctx, sole)
	if err != nil {
		return StatusFacts{}, err
	}
	facts.Postgres, facts.LockHolder, facts.BeforeRestore = w.Shared, w.WriterPID, w.BeforeRestore
	if w.Shared {
		facts.Lease = AccountLease(w.Leases, account)
	}
	return facts, nil
}

// AccountLease returns account's lease among leases (nil when no replica
// ever took it).
func AccountLease(leases []load.Lease, account string) *LeaseStatus {
	for _, l := range leases {
		if l.Account == account {
			return &LeaseStatus{Holder: l.Holder, FencingToken: l.FencingToken, ExpiresAt: rfc(l.ExpiresAt), Expired: l.Expired}
		}
	}
	return nil
}
