# Benchmarks: `make bench` (never part of `make check`).
.PHONY: bench
bench: bench-seccomp
bench: bench-spawn
bench: all

# Spawn latency of `securer run` next to bubblewrap, unshare and the bare
# command (results: docs/benchmarks.md).
.PHONY: bench-spawn
bench-spawn: securer
	@SECURER_BIN=$(abs_top_builddir)/securer $(SHELL) $(srcdir)/bench/spawn.sh
EXTRA_DIST += bench/spawn.sh bench/bwrap-equivalent.policy
