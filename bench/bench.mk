# Benchmarks: `make bench` (never part of `make check`).
.PHONY: bench
bench: bench-seccomp
bench: bench-spawn
bench: bench-session
bench: all

# Spawn latency of `securer run` next to bubblewrap, unshare and the bare
# command (results: docs/benchmarks.md).
.PHONY: bench-spawn
bench-spawn: securer securer-init
	@SECURER_BIN=$(abs_top_builddir)/securer $(SHELL) $(srcdir)/bench/spawn.sh
EXTRA_DIST += bench/spawn.sh bench/spawn-interleaved.py bench/spawn-phases.py bench/bwrap-equivalent.policy bench/bwrap-equivalent-masked.policy \
	bench/minimal-pid-proc.policy
# What hiding /proc entries by mounts costs, alone (docs/benchmarks.md,
# "/proc masks by name, and a procfs of the processes only"); needs root.
noinst_PROGRAMS += bench/proc-masks
bench_proc_masks_SOURCES = bench/proc-masks.c
.PHONY: bench-proc-masks
bench-proc-masks: bench/proc-masks
	@for mode in 0 1 2 3; do $(abs_top_builddir)/bench/proc-masks $$mode 300 || exit 1; done

# network allow: the proxy next to a direct connection, request latency
# and throughput (results: docs/benchmarks.md, "Network by allowlist").
bench: bench-netproxy
noinst_PROGRAMS += bench/http-get
bench_http_get_SOURCES = bench/http-get.c
# Without the sanitizers: linked statically, to run in any sandbox view.
bench_http_get_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
bench_http_get_LDFLAGS = -all-static
bench_http_get_LDADD =
.PHONY: bench-netproxy
bench-netproxy: securer securer-init bench/http-get
	@SECURER_BIN=$(abs_top_builddir)/securer HTTP_GET=$(abs_top_builddir)/bench/http-get $(SHELL) $(srcdir)/bench/netproxy.sh
EXTRA_DIST += bench/netproxy.sh bench/http-get.c

# Sessions: cold start next to bare R, warm execute, tool call, pool
# throughput (results: docs/benchmarks.md, "Sessions").
noinst_PROGRAMS += bench/session-bench
bench_session_bench_SOURCES = bench/session-bench.c
bench_session_bench_LDADD = libsecurer-core.la -lpthread
.PHONY: bench-session
bench-session: bench/session-bench
	@$(abs_top_builddir)/bench/session-bench

# The R package: warm execute and tool calls from R next to `securer exec`
# and bare Rscript (results: docs/benchmarks.md, "The R package").
bench: bench-r
.PHONY: bench-r
bench-r: securer securer-init
	@SECURER_BIN=$(abs_top_builddir)/securer $(SHELL) $(srcdir)/bench/r-client.sh
EXTRA_DIST += bench/r-client.sh bench/r-client.R
# securer-runc next to runc (and crun where it runs): podman run --rm and
# RUNTIME run on a bundle (results: docs/benchmarks.md, "OCI runtime").
.PHONY: bench-oci
bench-oci: securer-runc
	@SECURER_BUILDDIR=$(abs_top_builddir) SECURER_RUNC_BIN=$(abs_top_builddir)/securer-runc $(SHELL) $(srcdir)/bench/oci.sh
EXTRA_DIST += bench/oci.sh
# Scale and soak through `securer serve` (results: docs/benchmarks.md,
# "Scale" and "Soak").  Not part of `make bench`: the scale run starts 105
# sessions and the soak 10,000 requests.
.PHONY: bench-scale bench-soak
# SERVE_ARGS (e.g. --cold, --template, --policy r-server) go to serve.
bench-scale: securer securer-init
	@$(PYTHON3) $(srcdir)/bench/scale.py --securer $(abs_top_builddir)/securer scale -- $(SERVE_ARGS)
# open, one execute and close, over and over on one serve: execute_r() on a
# shared server (docs/benchmarks.md, "Sessions: cold and from a template").
.PHONY: bench-oneshot
bench-oneshot: securer securer-init
	@$(PYTHON3) $(srcdir)/bench/scale.py --securer $(abs_top_builddir)/securer oneshot -- $(SERVE_ARGS)
bench-soak: securer securer-init
	@$(PYTHON3) $(srcdir)/bench/scale.py --securer $(abs_top_builddir)/securer soak
PYTHON3 ?= python3
EXTRA_DIST += bench/scale.py

# The namespace mechanics of sessions from a template, checked and timed
# without R (docs/architecture.md, "Sessions from a template").
noinst_PROGRAMS += bench/zygote-probe
bench_zygote_probe_SOURCES = bench/zygote-probe.c
.PHONY: bench-zygote-probe
bench-zygote-probe: bench/zygote-probe
	@$(abs_top_builddir)/bench/zygote-probe 8
	@$(abs_top_builddir)/bench/zygote-probe 2 --mask-template || echo "(expected: a masked template proc refuses the sessions' own)"
# R's side of a session template: fork to first result and PSS per forked R.
.PHONY: bench-template-estimate
bench-template-estimate: securer securer-init
	@SECURER_BIN=$(abs_top_builddir)/securer $(SHELL) $(srcdir)/bench/template-estimate.sh
EXTRA_DIST += bench/template-estimate.sh
# Sessions from a template next to cold sandboxes, without R (results:
# docs/benchmarks.md, "Sessions from a template").  Root only.
noinst_PROGRAMS += bench/zygote-bench
bench_zygote_bench_SOURCES = bench/zygote-bench.c
bench_zygote_bench_LDADD = libsecurer-core.la
.PHONY: bench-zygote
bench-zygote: bench/zygote-bench securer-init securer-zygote.la
	hyperfine -N --warmup 3 --runs 30 \
	  '$(abs_top_builddir)/bench/zygote-bench cold 1' '$(abs_top_builddir)/bench/zygote-bench cold 20' \
	  '$(abs_top_builddir)/bench/zygote-bench template 1' '$(abs_top_builddir)/bench/zygote-bench template 20'
	hyperfine -N --warmup 1 --runs 10 \
	  '$(abs_top_builddir)/bench/zygote-bench r-cold 1' '$(abs_top_builddir)/bench/zygote-bench r-cold 10' \
	  '$(abs_top_builddir)/bench/zygote-bench r-template 1' '$(abs_top_builddir)/bench/zygote-bench r-template 10'
