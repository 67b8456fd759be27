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
//
// # The store and the run lock
//
// OpenStore takes the account's run lock before the warehouse opens, and is
// the one place Jobs are built; OpenTarget picks SQLite or PostgreSQL from
// the settings (through load/dialect). A Job writes a load.Destination under
// its run lock: a file's account lock, or on a server the account's lease
// (LeaseLock, on the warehouse's leases), kept alive while a run goes on;
// the run stops before its next page once the lease may have lapsed.
//
// # One run
//
// Job.Run: the lock, the warehouse's check, runs left running by dead
// processes marked abandoned, the run row, the account snapshot, the walk,
// removals, then the result recorded (with retries), the audit pruned and
// the WAL checkpointed where the warehouse has one.
//
// # The daemon
//
// Daemon runs any number of accounts (a single account is N = 1): one
// schedule loop per account, so a slow or failing account never delays
// another; scheduled backups between runs of every account, never
// overlapping a commit (Backups, runGate); SIGHUP reload; a watchdog fed by
// progress; a clean stop. With serve on a server, replicas.go keeps the
// replica's heartbeat, refuses a duplicate holder, keeps leases between
// runs, takes free and lapsed accounts up to the replica's share and hands
// accounts above it back (as their runs end, one per poll between runs); the
// TickObserver and LeaseObserver hooks are called for metrics.
//
// # Status
//
// status.go holds the types of `status -json` and NewAccountStatus's
// judgement of health (Assess), writer, lease and walk; status_read.go reads
// the facts (ReadStatusFacts) through what the warehouse can tell.
package worker
