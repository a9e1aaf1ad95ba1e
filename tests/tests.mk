# Shared test infrastructure and tests of the core (error, paths).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-error
TESTS += tests/unit/test-error
tests_unit_test_error_SOURCES = tests/unit/test-error.c
tests_unit_test_error_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_error_LDADD = $(TEST_LIBS)
endif
