# landlock — the Landlock step of the Linux backend, and its tests.
libsecurer_core_la_SOURCES += \
	src/lib/linux/landlock.c \
	src/lib/linux/landlock-internal.h \
	src/lib/linux/landlock-uapi.h

if ENABLE_TESTS
check_PROGRAMS += tests/helpers/ll-exec
tests_helpers_ll_exec_SOURCES = tests/helpers/ll-exec.c
tests_helpers_ll_exec_LDADD = libsecurer-core.la
check_PROGRAMS += tests/helpers/attack-probe
tests_helpers_attack_probe_SOURCES = tests/helpers/attack-probe.c
# Without the sanitizers: it runs inside sandboxes whose RLIMIT_AS is far
# below what a sanitizer runtime reserves at start.
tests_helpers_attack_probe_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
tests_helpers_attack_probe_LDFLAGS =
check_PROGRAMS += tests/unit/test-landlock
TESTS += tests/unit/test-landlock
tests_unit_test_landlock_SOURCES = tests/unit/test-landlock.c
tests_unit_test_landlock_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_landlock_LDADD = $(TEST_LIBS)
endif

if ENABLE_TESTS
check_PROGRAMS += tests/integration/test-landlock-r
TESTS += tests/integration/test-landlock-r
tests_integration_test_landlock_r_SOURCES = tests/integration/test-landlock-r.c
tests_integration_test_landlock_r_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_landlock_r_LDADD = $(TEST_LIBS)
endif

# The attack table: R code and attack-probe under policies/r.policy.
if ENABLE_TESTS
check_PROGRAMS += tests/integration/test-attacks
TESTS += tests/integration/test-attacks
tests_integration_test_attacks_SOURCES = tests/integration/test-attacks.c
tests_integration_test_attacks_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_attacks_LDADD = $(TEST_LIBS)
endif
