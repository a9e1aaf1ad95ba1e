# session — sources, data and tests of this area.
libsecurer_core_la_SOURCES += \
	src/lib/session/internal.h \
	src/lib/session/channel.c \
	src/lib/session/protocol.c \
	src/lib/session/value.c \
	src/lib/session/loop.c \
	src/lib/session/tools.c \
	src/lib/session/toolcmd.c \
	src/lib/session/audit.c \
	src/lib/session/sanitize.c \
	src/lib/session/prevalidate.c \
	src/lib/session/session.c \
	src/lib/session/pool.c \
	src/lib/session/utf8.c \
	src/lib/session/confine.c \
	src/lib/session/leftovers.c \
	src/lib/session/result.c \
	src/lib/session/templates.c \
	src/lib/session/policies.c

securerinclude_HEADERS += include/securer/session.h

# The R runtime is sent to R over the channel at start-up, so it only has
# to be readable by the host, never visible inside the sandbox.
runtimerdir = $(pkgdatadir)/runtime/r
dist_runtimer_DATA = src/runtime/r/runtime.R

if ENABLE_TESTS
SESSION_UNIT_TESTS = \
	tests/unit/test-session-channel \
	tests/unit/test-session-protocol \
	tests/unit/test-session-audit
check_PROGRAMS += $(SESSION_UNIT_TESTS)
TESTS += $(SESSION_UNIT_TESTS)
tests_unit_test_session_channel_SOURCES = tests/unit/test-session-channel.c
tests_unit_test_session_channel_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_session_channel_LDADD = $(TEST_LIBS)
tests_unit_test_session_protocol_SOURCES = tests/unit/test-session-protocol.c
tests_unit_test_session_protocol_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_session_protocol_LDADD = $(TEST_LIBS)
tests_unit_test_session_audit_SOURCES = tests/unit/test-session-audit.c
tests_unit_test_session_audit_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_session_audit_LDADD = $(TEST_LIBS)
endif

if ENABLE_TESTS
SESSION_INTEGRATION_TESTS = tests/integration/test-session tests/integration/test-serve \
	tests/integration/test-session-pool tests/integration/test-session-toolcmd \
	tests/integration/test-session-plots
check_PROGRAMS += $(SESSION_INTEGRATION_TESTS)
TESTS += $(SESSION_INTEGRATION_TESTS)
tests_integration_test_session_SOURCES = tests/integration/test-session.c tests/integration/host-util.h
tests_integration_test_session_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_session_LDADD = $(TEST_LIBS)
tests_integration_test_session_plots_SOURCES = tests/integration/test-session-plots.c
tests_integration_test_session_plots_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_session_plots_LDADD = $(TEST_LIBS)
tests_integration_test_session_pool_SOURCES = tests/integration/test-session-pool.c
tests_integration_test_session_pool_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_session_pool_LDADD = $(TEST_LIBS)
tests_integration_test_session_toolcmd_SOURCES = tests/integration/test-session-toolcmd.c
tests_integration_test_session_toolcmd_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_session_toolcmd_LDADD = $(TEST_LIBS)
tests_integration_test_serve_SOURCES = tests/integration/test-serve.c tests/integration/host-util.h
tests_integration_test_serve_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_serve_LDADD = $(TEST_LIBS)
# The switch between the two starts, and the templates the library keeps.
check_PROGRAMS += tests/integration/test-session-start
TESTS += tests/integration/test-session-start
tests_integration_test_session_start_SOURCES = tests/integration/test-session-start.c
tests_integration_test_session_start_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_session_start_LDADD = $(TEST_LIBS)
# Every session suite runs twice: cold (SECURER_SESSION_TEMPLATE=off for
# the whole of make check), and as NAME-template.tpl with every session
# forked from its policy's template (tests/with-template.sh).  The .tpl file
# only names the suite; the harness runs it through the wrapper.
SESSION_TEMPLATE_TESTS = $(SESSION_INTEGRATION_TESTS:=-template.tpl) tests/r-package-template.tpl
TESTS += $(SESSION_TEMPLATE_TESTS)
CLEANFILES += $(SESSION_TEMPLATE_TESTS)
endif

TEST_EXTENSIONS = .tpl
TPL_LOG_COMPILER = $(SHELL) $(srcdir)/tests/with-template.sh
EXTRA_DIST += tests/with-template.sh
%-template.tpl: %
	$(AM_V_GEN)echo "# $< with SECURER_SESSION_TEMPLATE=on" > $@
%-template.tpl: %.sh
	$(AM_V_GEN)echo "# $< with SECURER_SESSION_TEMPLATE=on" > $@
