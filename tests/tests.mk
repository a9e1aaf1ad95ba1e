# Shared test infrastructure and tests of the core (error, paths, SHA-256).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-error tests/unit/test-sha256
TESTS += tests/unit/test-error tests/unit/test-sha256
tests_unit_test_error_SOURCES = tests/unit/test-error.c
tests_unit_test_error_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_error_LDADD = $(TEST_LIBS)
tests_unit_test_sha256_SOURCES = tests/unit/test-sha256.c
tests_unit_test_sha256_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_sha256_LDADD = $(TEST_LIBS)
endif

# Launcher: tests/helpers/probe runs inside real sandboxes and reports what
# it sees; it only needs libc and is linked statically so any sandbox view
# can run it.
if ENABLE_TESTS
check_PROGRAMS += tests/helpers/probe tests/integration/test-run
TESTS += tests/integration/test-run
tests_helpers_probe_SOURCES = tests/helpers/probe.c
# Without the sanitizers: a sanitized program cannot be linked statically.
tests_helpers_probe_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
tests_helpers_probe_LDFLAGS = -all-static
tests_helpers_probe_LDADD =
tests_integration_test_run_SOURCES = tests/integration/test-run.c tests/integration/run-util.h
tests_integration_test_run_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_run_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/integration/test-run-cli
TESTS += tests/integration/test-run-cli
tests_integration_test_run_cli_SOURCES = tests/integration/test-run-cli.c tests/integration/cli-util.h tests/integration/run-util.h
tests_integration_test_run_cli_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_run_cli_LDADD = $(TEST_LIBS)
endif

# W^X and per-user counters under policies/r.policy: native-probe tries
# every way native code has to run what it wrote.  Linked dynamically, so
# that it uses the loader as R does.
if ENABLE_TESTS
check_PROGRAMS += tests/helpers/native-probe tests/integration/test-wx
TESTS += tests/integration/test-wx
tests_helpers_native_probe_SOURCES = tests/helpers/native-probe.c
# Without the sanitizers: their runtime maps memory in ways the W^X rules
# refuse, and the probe must see exactly its own calls.
tests_helpers_native_probe_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
tests_helpers_native_probe_LDFLAGS =
tests_helpers_native_probe_LDADD =
# A library that requires an executable stack, which W^X refuses to give.
check_LTLIBRARIES = tests/helpers/libexecstack.la
tests_helpers_libexecstack_la_SOURCES = tests/helpers/execstack.c
tests_helpers_libexecstack_la_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
tests_helpers_libexecstack_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere -Wl,-z,execstack
tests_integration_test_wx_SOURCES = tests/integration/test-wx.c
tests_integration_test_wx_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_wx_LDADD = $(TEST_LIBS)
endif

# Terminal sanitiser of the CLI (src/cli/termsafe.c), and the stdio relay of
# `securer run` as seen from a pipe and from a pseudo-terminal;
# tests/helpers/stdio-probe runs inside and tries to reach the caller's
# descriptions and terminal.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-termsafe tests/helpers/stdio-probe tests/integration/test-run-stdio
TESTS += tests/unit/test-termsafe tests/integration/test-run-stdio
tests_unit_test_termsafe_SOURCES = tests/unit/test-termsafe.c src/cli/termsafe.c src/cli/termsafe.h
tests_unit_test_termsafe_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src
tests_unit_test_termsafe_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_termsafe_LDADD = $(TEST_LIBS)
tests_helpers_stdio_probe_SOURCES = tests/helpers/stdio-probe.c tests/helpers/stdio-pattern.h
tests_helpers_stdio_probe_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
tests_helpers_stdio_probe_LDFLAGS = -all-static
tests_helpers_stdio_probe_LDADD =
tests_integration_test_run_stdio_SOURCES = tests/integration/test-run-stdio.c tests/integration/run-util.h \
	tests/helpers/stdio-pattern.h
tests_integration_test_run_stdio_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_run_stdio_LDADD = $(TEST_LIBS)
endif

# The decoding of `securer serve` requests that needs no server.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-serve-request
TESTS += tests/unit/test-serve-request
tests_unit_test_serve_request_SOURCES = tests/unit/test-serve-request.c src/cli/serve_request.c \
	src/cli/serve_request.h
tests_unit_test_serve_request_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/cli
tests_unit_test_serve_request_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_serve_request_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/test-serve-files
TESTS += tests/unit/test-serve-files
tests_unit_test_serve_files_SOURCES = tests/unit/test-serve-files.c src/cli/serve_files.c src/cli/serve_files.h
tests_unit_test_serve_files_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/cli
tests_unit_test_serve_files_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_serve_files_LDADD = $(TEST_LIBS)
endif

# The R package (r/): its testthat suite against this build's securer
# (skipped when R, R6, processx, jsonlite or testthat is missing).
if ENABLE_TESTS
TESTS += tests/r-package.sh
endif
EXTRA_DIST += tests/r-package.sh r

# Spawning from a caller whose other threads hold the allocator's lock: the
# child must not allocate (or fork through glibc) between clone and exec.
if ENABLE_TESTS
check_PROGRAMS += tests/integration/test-threaded
TESTS += tests/integration/test-threaded
tests_integration_test_threaded_SOURCES = tests/integration/test-threaded.c tests/integration/run-util.h
tests_integration_test_threaded_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_threaded_LDADD = $(TEST_LIBS) -lpthread
endif

# Identities of processes and namespaces that the kernel does not recycle
# while a test holds them (used by the integration suites).
EXTRA_DIST += tests/integration/ident.h tests/README.md
