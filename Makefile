# Shortcuts; each target is one command also shown in the README.
.PHONY: test e2e race fuzz ci bench bench-accounts dist

# The fast tier, the README's command: unit tests, the contract tests on
# both warehouses, a smoke test of the built binary (a few minutes).
test:
	go test ./...

# The full end-to-end tier: the proof suite against the built binary
# (faults, kills on both warehouses, replicas, Prometheus, Chromium,
# systemd units, the README's commands), as `go test -tags e2e ./e2e` in
# SHARDS processes side by side (.ci/e2e.sh; it mostly waits, so three
# take a third of the time of one).
SHARDS ?= 3
e2e:
	bash .ci/e2e.sh $(SHARDS)

# The race detector over the fast tier (-short trims the largest corpora).
# The SQLite engine (modernc.org/sqlite and its libc: C translated to Go)
# is compiled without race instrumentation: a race inside it would be
# SQLite's own, and instrumenting it made the tier 2-3 times slower. Every
# package of this module, the standard library and the other dependencies
# are instrumented.
race:
	CGO_ENABLED=1 go test -race -short -gcflags='modernc.org/...=-race=false' ./...

# Every fuzz target for FUZZTIME each (a duration such as 10m, or a count
# such as 100000x); CI runs each for 3000 executions.
FUZZTIME ?= 1m
fuzz:
	bash .ci/fuzz.sh $(FUZZTIME)

# Everything CI checks, as CI runs it (installs Debian packages it lacks).
ci:
	bash .ci/run

# The cost of a run side by side with sqlite-utils, each figure against
# its goal (installs sqlite-utils when missing).
bench:
	bash e2e/bench.sh

# How many accounts one serve keeps at the API's pace, into SQLite and into
# PostgreSQL (fsync on): the largest N with every account >= 0.95 of
# 180/min and no 429 (about 3 minutes an N; needs the postgresql package).
bench-accounts:
	bash e2e/bench-accounts.sh

# The release artefacts in dist/ (DIST=dir for another directory): static
# linux/amd64 and linux/arm64 tarballs, the Debian packages, the OCI image
# archive and SHA256SUMS, all stamped with the commit (two runs on one commit
# write identical tarballs and image). packaging/check.sh DIST checks them.
dist:
	bash packaging/dist.sh
