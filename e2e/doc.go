// Package e2e is cardsync's proof suite: it builds the cardsync binary and
// drives it against the simulator on loopback through crashes, signals,
// faults, drift, disk-full, lock contention and secret leaks, checking the
// warehouse invariants after each scenario. It holds tests and benchmarks
// only; nothing imports it.
package e2e
