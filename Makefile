# Shortcuts; each target is one command also shown in the README.
.PHONY: test bench bench-accounts dist

# The whole test suite, as CI runs it (bash .ci/run adds gofmt, vet,
# staticcheck, govulncheck and the race detector).
test:
	go test ./...

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
