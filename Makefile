# Shortcuts; each target is one command also shown in the README.
.PHONY: test bench

# The whole test suite, as CI runs it (bash .ci/run adds gofmt, vet,
# staticcheck, govulncheck and the race detector).
test:
	go test ./...

# The cost of a run side by side with sqlite-utils, each figure against
# its goal (installs sqlite-utils when missing).
bench:
	bash e2e/bench.sh
