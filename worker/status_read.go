package worker

import (
	"context"
	"fmt"

	"github.com/cardsync/cardsync/load"
)

// Summarizer is what status reads of every open warehouse: its summary.
type Summarizer interface {
	Summary(ctx context.Context) (load.Summary, error)
}

// ReadStatusFacts reads the status facts of the account wh is opened for:
// its summary, and what the warehouse's capabilities add: the account's
// lease (load.LeaseLister: a shared PostgreSQL database, where the lease
// says who syncs) or the file's writer and the warehouses restore kept
// beside it (load.FileStatus: a SQLite file). sole says the account is the
// [api] table's only one (its older writers lock the whole file).
func ReadStatusFacts(ctx context.Context, wh Summarizer, account string, sole bool) (StatusFacts, error) {
	sum, err := wh.Summary(ctx)
	if err != nil {
		return StatusFacts{}, err
	}
	facts := StatusFacts{Summary: sum}
	if l, ok := wh.(load.LeaseLister); ok {
		facts.Postgres = true
		if facts.Lease, err = AccountLease(ctx, l, account); err != nil {
			return StatusFacts{}, err
		}
	}
	if r, ok := wh.(load.RulesReader); ok {
		st, err := r.RulesState(ctx)
		if err != nil {
			return StatusFacts{}, err
		}
		facts.RulesVersion = st.Version
	}
	if f, ok := wh.(load.FileStatus); ok {
		facts.LockHolder = f.WriterPID(sole)
		if facts.BeforeRestore, err = f.BeforeRestore(); err != nil {
			return StatusFacts{}, fmt.Errorf("list kept warehouses: %w", err)
		}
	}
	return facts, nil
}

// AccountLease returns account's lease (nil when no replica ever took it).
func AccountLease(ctx context.Context, wh load.LeaseLister, account string) (*LeaseStatus, error) {
	leases, err := wh.Leases(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range leases {
		if l.Account == account {
			return &LeaseStatus{Holder: l.Holder, FencingToken: l.FencingToken, ExpiresAt: rfc(l.ExpiresAt), Expired: l.Expired}, nil
		}
	}
	return nil, nil
}
