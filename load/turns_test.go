package load

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

func TestWriteTurnsOneAtATimeInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		turns := NewWriteTurns()
		release, err := turns.Take(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var order []int
		done := make(chan struct{})
		for i := range 3 {
			go func() {
				rel, err := turns.Take(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				order = append(order, i)
				rel()
				done <- struct{}{}
			}()
			synctest.Wait() // waiter i queues before waiter i+1
		}
		if len(order) != 0 {
			t.Fatalf("a writer wrote during another's turn: %v", order)
		}
		release()
		for range 3 {
			<-done
		}
		if want := []int{0, 1, 2}; len(order) != 3 || order[0] != 0 || order[1] != 1 || order[2] != 2 {
			t.Errorf("turns taken in order %v, want %v", order, want)
		}
	})
}

func TestWriteTurnsGiveUpWithTheContext(t *testing.T) {
	turns := NewWriteTurns()
	release, err := turns.Take(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := turns.Take(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Take with an ended context = %v, want context.Canceled", err)
	}
	var none *WriteTurns
	rel, err := none.Take(ctx)
	if err != nil {
		t.Errorf("nil turns: %v", err)
	}
	rel()
}
