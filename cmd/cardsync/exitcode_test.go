package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cardsync/cardsync/config"
	"github.com/cardsync/cardsync/extract"
	"github.com/cardsync/cardsync/load"
	"github.com/cardsync/cardsync/worker"
)

func TestExitCode(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("walk cards: fetch cards page 2: %w", err) }
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"config", &config.Error{Key: "api.base_url", Msg: "x"}, exitConfig},
		{"locked", wrap(load.ErrLocked), exitLocked},
		{"interrupted", wrap(context.Canceled), exitInterrupted},
		{"auth", wrap(extract.ErrUnauthenticated), exitAuth},
		{"warehouse", wrap(worker.ErrWarehouse), exitWarehouse},
		{"unavailable", wrap(&extract.WaitError{Last: fmt.Errorf("%w: status 503", extract.ErrUnavailable)}), exitUnavailable},
		{"truncated body after retries", wrap(&extract.WaitError{Last: fmt.Errorf("%w: %w", extract.ErrUnavailable,
			&extract.ProtocolError{StatusCode: 200, Reason: "truncated body", Transient: true, Truncated: true})}), exitBadData},
		{"HTML 502 page after retries", wrap(&extract.WaitError{Last: fmt.Errorf("%w: %w", extract.ErrUnavailable,
			&extract.ProtocolError{StatusCode: 502, Reason: "error page is not JSON", Transient: true})}), exitUnavailable},
		{"protocol", wrap(&extract.ProtocolError{Reason: "response body exceeds the limit"}), exitBadData},
		{"redirect to a foreign origin", wrap(fmt.Errorf("status 302: redirect refused: %w", extract.ErrForeignOrigin)), exitBadData},
		{"redirect on the same origin", wrap(&extract.RedirectError{StatusCode: 302, Location: "/login"}), exitBadData},
		{"redirect elsewhere", wrap(&extract.RedirectError{StatusCode: 301, Location: "https://other.example/", Foreign: true}), exitBadData},
		{"204 No Content", wrap(&extract.ProtocolError{StatusCode: 204, Reason: "no body", Err: extract.ErrNoContent}), exitBadData},
		{"pagination loop", wrap(fmt.Errorf("walk passed total_pages plus slack (8): %w", extract.ErrPaginationLoop)), exitBadData},
		{"total_pages beyond api.max_pages", wrap(fmt.Errorf("total_pages is 2147483647, more than api.max_pages 100000: %w", extract.ErrTooManyPages)), exitBadData},
		{"data the warehouse refuses", fmt.Errorf("%w: %w", worker.ErrWarehouse, fmt.Errorf("save account: balance: %w", load.ErrAmountScale)), exitBadData},
		{"missing warehouse directory", fmt.Errorf("%w: acquire lock: no such file or directory", worker.ErrWarehouse), exitWarehouse},
		{"other", errors.New("boom"), exitFailure},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitCode(tc.err); got != tc.want {
				t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}
