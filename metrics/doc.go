// Package metrics owns what cardsync tells a monitoring system: its own
// Prometheus registries (the cardsync_* families, and apart from them the Go
// and process collectors), the series' names and bounded label values, the
// /metrics and /healthz endpoints, and the node_exporter textfile that
// `backfill -metrics-textfile` writes.
//
// It learns about the program through the small interfaces the lower
// packages define (extract.Observer for each request, worker.Observer for
// each run), one of each per account so the account label comes from the
// caller and never from the lower packages, and reads the warehouse only
// through its Summary and Runs (load.Destination), to seed an account's
// gauges at start-up and refresh them after its run and at every schedule
// tick (worker.TickObserver), so that with replicas sharing a warehouse an
// account's health is its runs' by any replica. The lease series follow
// worker.LeaseObserver. The account label's values are the
// configured accounts' names (Options.Accounts): bounded, and created at 0
// at start-up like every other label value. /healthz is healthy only while
// every account is.
//
// It must not write the warehouse, speak to the upstream API, register
// anything with prometheus.DefaultRegisterer, or put a card id, an e-mail,
// an error text or any other unbounded value in a label. Packages extract,
// load and worker never import it.
//
// One hook of each kind per account: ClientObserver(account) and
// RunObserver(account, …). At every tick, RunObserver's worker.TickObserver
// reads the account's Runs first and its Summary only when they changed.
package metrics
