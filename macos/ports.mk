# ports — the macOS (Seatbelt) and Windows (Job Objects) backends.
# Their plan layers are portable and built into the core so `make check`
# tests them on Linux; the launchers are platform code, shipped as source.
libsecurer_core_la_SOURCES += \
	macos/ports-internal.h \
	macos/port-report.c \
	macos/seatbelt.c
securerinclude_HEADERS += include/securer/ports.h

if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-ports-seatbelt
TESTS += tests/unit/test-ports-seatbelt
tests_unit_test_ports_seatbelt_SOURCES = tests/unit/test-ports-seatbelt.c tests/unit/ports-policy.h
tests_unit_test_ports_seatbelt_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ports_seatbelt_LDADD = $(TEST_LIBS)
endif

# Cross-compiles the Windows backend with mingw-w64 to prove it builds
# (apt-get install gcc-mingw-w64-x86-64).  Not part of `make check`.
MINGW_CC = x86_64-w64-mingw32-gcc
MINGW_CFLAGS = -std=gnu11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter \
	-DUNICODE -D_UNICODE -D_WIN32_WINNT=0x0A00 -I$(top_srcdir)/include
.PHONY: check-windows-build
check-windows-build:
	@command -v $(MINGW_CC) >/dev/null || { echo "$(MINGW_CC) not found: apt-get install gcc-mingw-w64-x86-64"; exit 1; }
	@mkdir -p windows-build
	$(MINGW_CC) $(MINGW_CFLAGS) -o windows-build/securer-winrun.exe \
		$(top_srcdir)/windows/launch-windows.c $(top_srcdir)/windows/jobobject.c \
		$(top_srcdir)/windows/win-error.c $(top_srcdir)/macos/port-report.c \
		$(top_srcdir)/windows/winrun-main.c -luserenv -ladvapi32
	@echo "windows-build/securer-winrun.exe: cross-compiled for Windows x86-64"
CLEANFILES += windows-build/securer-winrun.exe
