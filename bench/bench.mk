# Benchmarks: `make bench` (never part of `make check`).
.PHONY: bench
bench: bench-seccomp
bench: all
	@echo "no benchmarks yet"
