// Package e2e is cardsync's proof suite: it builds the cardsync binary (once
// per test process, as released: internal/testbinary) and drives it against
// the simulator on loopback through crashes, signals, faults, drift,
// disk-full, lock contention and secret leaks, checking the warehouse
// invariants after each scenario. It holds tests and benchmarks only;
// nothing imports it, and it must not reach into the packages it tests
// except to build their inputs (the simulator, a client for in-process
// scenarios): the binary is what it proves.
//
// Two tiers. Without a tag (`go test ./...`) it runs TestSmoke (a backfill
// killed and resumed, status, one serve run) and the checks of the
// documentation. With the e2e build tag (`go test -tags e2e ./e2e`, `make
// e2e`, always in CI) it runs the whole suite: every file but harness,
// background, kill, pgserver, smoke and the docs checks carries
// `//go:build e2e`.
//
// The benchmarks: `make bench` (e2e/bench.sh) and `make bench-accounts`
// (e2e/bench-accounts.sh: how many accounts one serve keeps at the API's
// pace).
package e2e
