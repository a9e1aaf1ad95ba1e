# ports — the macOS (Seatbelt) and Windows (Job Objects) backends.
# Their plan layers are portable and built into the core so `make check`
# tests them on Linux; the launchers are platform code, shipped as source.
libsecurer_core_la_SOURCES += \
	macos/ports-internal.h \
	macos/port-report.c \
	macos/seatbelt.c \
	windows/jobobject.c
securerinclude_HEADERS += include/securer/ports.h

if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-ports-seatbelt tests/unit/test-ports-jobobject
TESTS += tests/unit/test-ports-seatbelt tests/unit/test-ports-jobobject
tests_unit_test_ports_seatbelt_SOURCES = tests/unit/test-ports-seatbelt.c tests/unit/ports-policy.h
tests_unit_test_ports_seatbelt_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ports_seatbelt_LDADD = $(TEST_LIBS)
tests_unit_test_ports_jobobject_SOURCES = tests/unit/test-ports-jobobject.c tests/unit/ports-policy.h
tests_unit_test_ports_jobobject_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_ports_jobobject_LDADD = $(TEST_LIBS)
endif
