# policy — sources, data and tests of this area.
libsecurer_core_la_SOURCES += \
	src/lib/policy/internal.h \
	src/lib/policy/diag.c \
	src/lib/policy/lexer.c \
	src/lib/policy/parser.c \
	src/lib/policy/resolve.c \
	src/lib/policy/json.c \
	src/lib/policy/text.c \
	src/lib/policy/policy.c

nobase_dist_pkgdata_DATA += \
	policies/minimal.policy \
	policies/r.policy \
	policies/r-server.policy \
	policies/base/fs-system.policy \
	policies/base/fs-r.policy \
	policies/base/isolation.policy \
	policies/base/env.policy \
	policies/base/seccomp-common.policy \
	policies/base/seccomp-hardening.policy \
	policies/base/seccomp-wx.policy

dist_man_MANS += docs/man/securer-policy.5

EXTRA_DIST += tests/unit/data/policy tests/fuzz/fuzz-policy.c tests/fuzz/policy.dict

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

# libFuzzer target, built with clang straight from the sources so that it
# never depends on how the rest of the tree was configured.  Only the policy
# code carries coverage instrumentation; the code it calls (names, groups,
# errors, paths, suggestions) is built with the sanitizers alone, so the
# fuzzer spends its time where the inputs are interpreted.
FUZZ_CC = clang
FUZZ_SAN = -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_POLICY_SRCS = \
	$(top_srcdir)/tests/fuzz/fuzz-policy.c \
	$(top_srcdir)/src/lib/policy/diag.c \
	$(top_srcdir)/src/lib/policy/lexer.c \
	$(top_srcdir)/src/lib/policy/parser.c \
	$(top_srcdir)/src/lib/policy/resolve.c \
	$(top_srcdir)/src/lib/policy/json.c \
	$(top_srcdir)/src/lib/policy/text.c \
	$(top_srcdir)/src/lib/policy/policy.c
FUZZ_SUPPORT_SRCS = \
	$(top_srcdir)/src/lib/seccomp/names.c \
	$(top_srcdir)/src/lib/seccomp/groups.c \
	$(top_srcdir)/src/lib/seccomp/constants.c \
	$(top_srcdir)/src/lib/error.c \
	$(top_srcdir)/src/lib/paths.c \
	$(top_srcdir)/src/lib/suggest.c
FUZZ_CPPFLAGS = -std=gnu11 -I. $(AM_CPPFLAGS) $(SECCOMP_CFLAGS) $(JANSSON_CFLAGS)
FUZZ_TIME ?= 60

.PHONY: fuzz fuzz-run
fuzz: tests/fuzz/fuzz-policy
tests/fuzz/fuzz-policy: $(FUZZ_POLICY_SRCS) $(FUZZ_SUPPORT_SRCS) config.h
	@mkdir -p tests/fuzz/obj
	$(AM_V_CC)for f in $(FUZZ_SUPPORT_SRCS); do \
	  $(FUZZ_CC) $(FUZZ_SAN) $(FUZZ_CPPFLAGS) -c $$f -o tests/fuzz/obj/$$(basename $$f .c).o || exit 1; \
	done; \
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $(FUZZ_CPPFLAGS) -o $@ $(FUZZ_POLICY_SRCS) \
	  tests/fuzz/obj/*.o $(SECCOMP_LIBS) $(JANSSON_LIBS) -lpthread
fuzz-run: tests/fuzz/fuzz-policy
	@mkdir -p tests/fuzz/corpus
	cp $(top_srcdir)/policies/*.policy $(top_srcdir)/policies/base/*.policy \
	  $(top_srcdir)/tests/unit/data/policy/*.policy tests/fuzz/corpus/
	SECURER_DATADIR=$(abs_top_srcdir) tests/fuzz/fuzz-policy -max_total_time=$(FUZZ_TIME) \
	  -dict=$(top_srcdir)/tests/fuzz/policy.dict -max_len=4096 -timeout=10 -rss_limit_mb=2048 tests/fuzz/corpus
CLEANFILES += tests/fuzz/fuzz-policy
