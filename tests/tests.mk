# Shared test infrastructure and tests of the core (error, paths).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-error
TESTS += tests/unit/test-error
tests_unit_test_error_SOURCES = tests/unit/test-error.c
tests_unit_test_error_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_error_LDADD = $(TEST_LIBS)
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
tests_integration_test_run_cli_SOURCES = tests/integration/test-run-cli.c tests/integration/run-util.h
tests_integration_test_run_cli_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_run_cli_LDADD = $(TEST_LIBS)
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
endif
