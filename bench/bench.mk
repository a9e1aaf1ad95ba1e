# Benchmarks: `make bench` (never part of `make check`).
.PHONY: bench
bench: all
	@echo "no benchmarks yet"
