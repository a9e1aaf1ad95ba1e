# landlock — the Landlock step of the Linux backend, and its tests.
libsecurer_core_la_SOURCES += \
	src/lib/linux/landlock.c \
	src/lib/linux/landlock-internal.h \
	src/lib/linux/landlock-uapi.h

if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-landlock
TESTS += tests/unit/test-landlock
tests_unit_test_landlock_SOURCES = tests/unit/test-landlock.c
tests_unit_test_landlock_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_landlock_LDADD = $(TEST_LIBS)
endif
