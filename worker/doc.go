// Package worker runs one sync: it ties extract (the API client) to load (the
// warehouse) — authenticate, snapshot the account, walk the card pages with
// resumable checkpoints, mark removals after a complete walk, and record the
// run — and the daemon that schedules runs (Daemon: one schedule loop per
// account, no overlap, backups between runs, SIGHUP reload, watchdog, clean
// stop), the store that takes the writer lock before the warehouse opens
// (OpenStore: a file's lock, or the account's LeaseLock over the
// warehouse's load.Cluster, each a load.RunLock), the observers' fan-out
// (Observers), and health judgement (Assess). It holds the warehouse
// contract (load.Destination, load.Reader) as it is, with no type
// assertion on it.
// It must not speak HTTP or SQL itself, nor parse configuration.
package worker
