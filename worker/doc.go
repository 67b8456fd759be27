// Package worker runs one sync: it ties extract (the API client) to load (the
// warehouse) — authenticate, snapshot the account, walk the card pages with
// resumable checkpoints, mark removals after a complete walk, and record the
// run. It owns no HTTP or SQL of its own.
package worker
