# policy — sources, data and tests of this area.
libsecurer_core_la_SOURCES += \
	src/lib/policy/internal.h \
	src/lib/policy/diag.c \
	src/lib/policy/lexer.c \
	src/lib/policy/parser.c \
	src/lib/policy/resolve.c \
	src/lib/policy/defer.c \
	src/lib/policy/json.c \
	src/lib/policy/text.c \
	src/lib/policy/policy.c \
	src/lib/policy/netrule.c \
	src/lib/policy/expect.h \
	src/lib/policy/expect.c \
	src/lib/policy/derive.h \
	src/lib/policy/derive.c \
	src/lib/linux/view.h \
	src/lib/linux/view.c

nobase_dist_pkgdata_DATA += \
	policies/minimal.policy \
	policies/r.policy \
	policies/r-server.policy \
	policies/r-unsandboxed.policy \
	policies/base/fs-system.policy \
	policies/base/fs-r.policy \
	policies/base/isolation.policy \
	policies/base/env.policy \
	policies/base/seccomp-common.policy \
	policies/base/seccomp-hardening.policy \
	policies/base/seccomp-wx.policy

dist_man_MANS += docs/man/securer-policy.5

EXTRA_DIST += tests/unit/data/policy tests/policies

if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-policy-parse tests/unit/test-policy-json tests/unit/test-policy-cli \
	tests/unit/test-policy-defer
TESTS += tests/unit/test-policy-parse tests/unit/test-policy-json tests/unit/test-policy-cli \
	tests/unit/test-policy-defer
tests_unit_test_policy_parse_SOURCES = tests/unit/test-policy-parse.c tests/unit/policy-test.h
tests_unit_test_policy_parse_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_policy_parse_LDADD = $(TEST_LIBS)
tests_unit_test_policy_json_SOURCES = tests/unit/test-policy-json.c tests/unit/policy-test.h
tests_unit_test_policy_json_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_policy_json_LDADD = $(TEST_LIBS)
tests_unit_test_policy_cli_SOURCES = tests/unit/test-policy-cli.c tests/unit/policy-test.h
tests_unit_test_policy_cli_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_policy_cli_LDADD = $(TEST_LIBS)
tests_unit_test_policy_defer_SOURCES = tests/unit/test-policy-defer.c tests/unit/policy-test.h
tests_unit_test_policy_defer_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_policy_defer_LDADD = $(TEST_LIBS)
endif

# What a path inside the sandbox will be (`path`/`exec` expectations).
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-policy-view
TESTS += tests/unit/test-policy-view
tests_unit_test_policy_view_SOURCES = tests/unit/test-policy-view.c tests/unit/policy-test.h
tests_unit_test_policy_view_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_policy_view_LDADD = $(TEST_LIBS)
endif

# The view checked against real sandboxes of the shipped policies.
if ENABLE_TESTS
check_PROGRAMS += tests/helpers/view-probe
tests_helpers_view_probe_SOURCES = tests/helpers/view-probe.c
# Without the sanitizers: linked statically, to run in any sandbox view.
tests_helpers_view_probe_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
tests_helpers_view_probe_LDFLAGS = -all-static
tests_helpers_view_probe_LDADD =
check_PROGRAMS += tests/integration/test-policy-view-kernel
TESTS += tests/integration/test-policy-view-kernel
tests_integration_test_policy_view_kernel_SOURCES = tests/integration/test-policy-view-kernel.c
tests_integration_test_policy_view_kernel_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_policy_view_kernel_LDADD = $(TEST_LIBS)
endif
