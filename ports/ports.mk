# ports — the macOS (Seatbelt) and Windows (Job Objects) backends.
# What both share lives here in ports/ (the report of gaps, path mapping,
# the plan viewer, these build rules); macos/ and windows/ hold only their
# platform.  The plan layers are portable and built into the core so
# `make check` tests them on Linux; the launchers are platform code.
libsecurer_core_la_SOURCES += \
	ports/ports-internal.h \
	ports/port-report.c \
	macos/seatbelt.c \
	windows/jobobject.c
securerinclude_HEADERS += include/securer/ports.h

# Shows what the ports make of a policy (profile or plan, and the report).
noinst_PROGRAMS += ports/securer-port-plan
ports_securer_port_plan_SOURCES = ports/port-plan.c
ports_securer_port_plan_LDADD = libsecurer-core.la

if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-ports-seatbelt tests/unit/test-ports-jobobject
TESTS += tests/unit/test-ports-seatbelt tests/unit/test-ports-jobobject
tests_unit_test_ports_seatbelt_SOURCES = tests/unit/test-ports-seatbelt.c tests/unit/ports-policy.h
tests_unit_test_ports_seatbelt_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ports_seatbelt_LDADD = $(TEST_LIBS)
tests_unit_test_ports_jobobject_SOURCES = tests/unit/test-ports-jobobject.c tests/unit/ports-policy.h
tests_unit_test_ports_jobobject_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ports_jobobject_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/unit/test-ports-policies
TESTS += tests/unit/test-ports-policies
tests_unit_test_ports_policies_SOURCES = tests/unit/test-ports-policies.c
tests_unit_test_ports_policies_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ports_policies_LDADD = $(TEST_LIBS)
endif
EXTRA_DIST += windows/launch-windows.c windows/winrun-main.c \
	windows/mingw/config.h

# Cross-compiles the Windows port (plan, launcher, securer-winrun) with
# mingw-w64: `make check-windows-build` (apt-get install
# gcc-mingw-w64-x86-64).  When configure found mingw-w64 and wine64, `make
# check` also builds it with tests/windows/winprobe.exe and runs the port
# under Wine (tests/windows/test-wine.sh); otherwise that test is skipped
# and says why.
MINGW_CC = @MINGW_CC@
MINGW_CFLAGS = -std=gnu11 -O2 -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wvla -Wno-unused-parameter -Werror \
	-D__USE_MINGW_ANSI_STDIO=1 -D_WIN32_WINNT=0x0A00 \
	-I$(top_srcdir)/windows/mingw -I$(top_srcdir)/include -I$(top_srcdir)
MINGW_SRC_FILES = windows/launch-windows.c windows/winrun-main.c windows/jobobject.c \
	macos/seatbelt.c ports/port-report.c src/lib/error.c
windows/securer-winrun.exe: $(addprefix $(top_srcdir)/,$(MINGW_SRC_FILES)) include/securer/ports.h
	@$(MKDIR_P) windows
	$(AM_V_CC)$(MINGW_CC) $(MINGW_CFLAGS) -o $@ $(addprefix $(top_srcdir)/,$(MINGW_SRC_FILES)) \
	  -luserenv -ladvapi32 -lshell32
tests/windows/winprobe.exe: $(top_srcdir)/tests/windows/winprobe.c
	@$(MKDIR_P) tests/windows
	$(AM_V_CC)$(MINGW_CC) $(MINGW_CFLAGS) -municode -o $@ $(top_srcdir)/tests/windows/winprobe.c
.PHONY: check-windows-build
check-windows-build:
	@test -n "$(MINGW_CC)" || \
	  { echo "x86_64-w64-mingw32-gcc not found at configure time: apt-get install gcc-mingw-w64-x86-64" >&2; exit 1; }
	@rm -f windows/securer-winrun.exe
	@$(MAKE) $(AM_MAKEFLAGS) windows/securer-winrun.exe
	@echo "windows/securer-winrun.exe: Windows x86-64 build OK"
CLEANFILES += windows/securer-winrun.exe tests/windows/winprobe.exe
if WINE_TESTS
check_DATA = windows/securer-winrun.exe tests/windows/winprobe.exe
endif
TESTS += tests/windows/test-wine.sh
TESTS_ENVIRONMENT_VARS += WINE64=@WINE64@
EXTRA_DIST += tests/windows/test-wine.sh tests/windows/winprobe.c

# The macOS launcher uses POSIX calls only: check that it compiles here.
.PHONY: check-macos-syntax
check-macos-syntax:
	$(AM_V_CC)$(CC) -std=gnu11 -fsyntax-only -D__APPLE__ $(WARN_CFLAGS) -Werror \
	  -I$(top_srcdir)/include $(top_srcdir)/macos/launch-macos.c
	@echo "macos/launch-macos.c: syntax OK"

# The macOS launcher's logic, run on Linux against a stand-in sandbox-exec.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-ports-launch-macos
TESTS += tests/unit/test-ports-launch-macos
tests_unit_test_ports_launch_macos_SOURCES = tests/unit/test-ports-launch-macos.c \
	macos/launch-macos.c tests/unit/ports-policy.h
tests_unit_test_ports_launch_macos_CPPFLAGS = $(AM_CPPFLAGS) -DSECURER_MACOS_LAUNCH_TEST
tests_unit_test_ports_launch_macos_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ports_launch_macos_LDADD = $(TEST_LIBS)
endif

# Every generated Seatbelt profile read by an SBPL reader written for the test.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-ports-sbpl
TESTS += tests/unit/test-ports-sbpl
tests_unit_test_ports_sbpl_SOURCES = tests/unit/test-ports-sbpl.c
tests_unit_test_ports_sbpl_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ports_sbpl_LDADD = $(TEST_LIBS)
endif
