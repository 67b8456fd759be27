// Package e2e is cardsync's proof suite: it builds the cardsync binary and
// drives it against the simulator on loopback through crashes, signals,
// faults, drift, disk-full, lock contention and secret leaks, checking the
// warehouse invariants after each scenario. It holds tests and benchmarks
// only; nothing imports it, and it must not reach into the packages it
// tests except to build their inputs (the simulator, a client for
// in-process scenarios): the binary is what it proves.
package e2e
