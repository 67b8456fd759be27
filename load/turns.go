package load

import (
	"context"
	"fmt"
)

// WriteTurns hands the writers of one warehouse file in one process
// (the accounts of a `serve` or a `backfill`) their write transactions
// one at a time, in the order they asked (Options.WriteTurns). Without it
// each account's connection waits for the file's write lock in SQLite's
// busy handler, which polls with growing sleeps and favours whoever asks
// last: with a hundred or more accounts committing every second some
// waited past their BusyTimeout (measured: 7 of 200 accounts' runs failed
// "context deadline exceeded" in 90 s, `make bench-accounts`). Turns are
// fair: a Go channel serves blocked senders first in, first out. Writers
// of other processes still meet the busy handler. The zero value is not
// usable; NewWriteTurns makes one.
type WriteTurns struct {
	turn chan struct{}
}

// NewWriteTurns returns turns for the writers of one file.
func NewWriteTurns() *WriteTurns {
	return &WriteTurns{turn: make(chan struct{}, 1)}
}

// Take waits for the writer's turn, or for ctx to end; release ends the
// turn and must be called exactly once. A nil WriteTurns gives every
// writer its turn at once.
func (t *WriteTurns) Take(ctx context.Context) (release func(), err error) {
	if t == nil {
		return func() {}, nil
	}
	select {
	case t.turn <- struct{}{}:
		return func() { <-t.turn }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for the turn to write: %w", context.Cause(ctx))
	}
}
