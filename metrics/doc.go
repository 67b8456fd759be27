// Package metrics owns what cardsync tells a monitoring system: its own
// Prometheus registries (the cardsync_* families, and apart from them the Go
// and process collectors), the series' names and bounded label values, the
// /metrics and /healthz endpoints, and the node_exporter textfile that
// `backfill -metrics-textfile` writes.
//
// It learns about the program through the small interfaces the lower
// packages define (extract.Observer for each request, worker.Observer for
// each run) and reads the warehouse only through load.Warehouse.Summary,
// to seed its gauges at start-up and refresh them after a run.
//
// It must not write the warehouse, speak to the upstream API, register
// anything with prometheus.DefaultRegisterer, or put a card id, an e-mail,
// an error text or any other unbounded value in a label. Packages extract,
// load and worker never import it.
package metrics
