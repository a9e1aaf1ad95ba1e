# policy — sources, data and tests of this area.
libsecurer_core_la_SOURCES += \
	src/lib/policy/internal.h \
	src/lib/policy/diag.c \
	src/lib/policy/lexer.c \
	src/lib/policy/parser.c \
	src/lib/policy/resolve.c \
	src/lib/policy/json.c \
	src/lib/policy/text.c \
	src/lib/policy/policy.c \
	src/lib/policy/expect.h \
	src/lib/policy/expect.c

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
check_PROGRAMS += tests/unit/test-policy-parse tests/unit/test-policy-json tests/unit/test-policy-cli
TESTS += tests/unit/test-policy-parse tests/unit/test-policy-json tests/unit/test-policy-cli
tests_unit_test_policy_parse_SOURCES = tests/unit/test-policy-parse.c tests/unit/policy-test.h
tests_unit_test_policy_parse_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_policy_parse_LDADD = $(TEST_LIBS)
tests_unit_test_policy_json_SOURCES = tests/unit/test-policy-json.c tests/unit/policy-test.h
tests_unit_test_policy_json_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_policy_json_LDADD = $(TEST_LIBS)
tests_unit_test_policy_cli_SOURCES = tests/unit/test-policy-cli.c tests/unit/policy-test.h
tests_unit_test_policy_cli_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_policy_cli_LDADD = $(TEST_LIBS)
endif
