// Package worker runs one sync: it ties extract (the API client) to load (the
// warehouse) — authenticate, snapshot the account, walk the card pages with
// resumable checkpoints, mark removals after a complete walk, and record the
// run — and the daemon that schedules runs (Daemon: one schedule loop per
// account, no overlap, backups between runs, SIGHUP reload, watchdog, clean
// stop), the store that takes the writer lock before the warehouse opens
// (OpenStore), and health judgement (Assess).
// It must not speak HTTP or SQL itself, nor parse configuration.
package worker
