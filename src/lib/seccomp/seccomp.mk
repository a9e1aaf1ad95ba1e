# seccomp — sources, data and tests of this area.
libsecurer_core_la_SOURCES += \
	src/lib/seccomp/seccomp.h \
	src/lib/seccomp/names.c \
	src/lib/seccomp/groups.c \
	src/lib/seccomp/constants.c \
	src/lib/seccomp/argwidth.h \
	src/lib/seccomp/argwidth.c \
	src/lib/seccomp/prog.h \
	src/lib/seccomp/compile.c \
	src/lib/seccomp/textcache.c \
	src/lib/seccomp/emulate.c \
	src/lib/seccomp/cache.c \
	src/lib/seccomp/notify.c \
	src/lib/seccomp/oci.c \
	src/lib/seccomp/ruletext.h \
	src/lib/seccomp/ruletext.c \
	src/lib/seccomp/learn.h \
	src/lib/seccomp/complain.h \
	src/lib/seccomp/complain.c \
	src/lib/seccomp/learn.c \
	src/lib/seccomp/learn-expect.c

securer_SOURCES += src/cli/cmd_policy_seccomp.c src/cli/cmd_policy_learn.c src/cli/cmd_policy_test.c src/cli/cmd_policy_explain.c src/cli/cmd_policy_diff.c

nobase_dist_pkgdata_DATA += \
	seccomp/aio.syscalls \
	seccomp/basic-io.syscalls \
	seccomp/chown.syscalls \
	seccomp/clock.syscalls \
	seccomp/cpu-emulation.syscalls \
	seccomp/debug.syscalls \
	seccomp/default.syscalls \
	seccomp/file-system.syscalls \
	seccomp/io-event.syscalls \
	seccomp/ipc.syscalls \
	seccomp/keyring.syscalls \
	seccomp/memlock.syscalls \
	seccomp/module.syscalls \
	seccomp/mount.syscalls \
	seccomp/network-io.syscalls \
	seccomp/obsolete.syscalls \
	seccomp/pkey.syscalls \
	seccomp/privileged.syscalls \
	seccomp/process.syscalls \
	seccomp/raw-io.syscalls \
	seccomp/reboot.syscalls \
	seccomp/resources.syscalls \
	seccomp/sandbox.syscalls \
	seccomp/setuid.syscalls \
	seccomp/signal.syscalls \
	seccomp/swap.syscalls \
	seccomp/sync.syscalls \
	seccomp/system-service.syscalls \
	seccomp/timer.syscalls

if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-seccomp-names
TESTS += tests/unit/test-seccomp-names
tests_unit_test_seccomp_names_SOURCES = tests/unit/test-seccomp-names.c
tests_unit_test_seccomp_names_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_seccomp_names_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/unit/test-seccomp-compile
TESTS += tests/unit/test-seccomp-compile
tests_unit_test_seccomp_compile_SOURCES = tests/unit/test-seccomp-compile.c
tests_unit_test_seccomp_compile_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_seccomp_compile_LDADD = $(TEST_LIBS)

# The userspace seccomp-BPF interpreter, checked against real filtered
# processes.
check_PROGRAMS += tests/unit/test-seccomp-emulate
TESTS += tests/unit/test-seccomp-emulate
tests_unit_test_seccomp_emulate_SOURCES = tests/unit/test-seccomp-emulate.c
tests_unit_test_seccomp_emulate_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_seccomp_emulate_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/unit/test-seccomp-oci
TESTS += tests/unit/test-seccomp-oci
tests_unit_test_seccomp_oci_SOURCES = tests/unit/test-seccomp-oci.c
tests_unit_test_seccomp_oci_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_seccomp_oci_LDADD = $(TEST_LIBS)

# securer policy learn: learning real commands and running what was learned.
check_PROGRAMS += tests/integration/test-learn
TESTS += tests/integration/test-learn
tests_integration_test_learn_SOURCES = tests/integration/test-learn.c tests/integration/cli-util.h tests/integration/run-util.h
tests_integration_test_learn_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_learn_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/integration/test-learn-fragment
TESTS += tests/integration/test-learn-fragment
tests_integration_test_learn_fragment_SOURCES = tests/integration/test-learn-fragment.c
tests_integration_test_learn_fragment_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_learn_fragment_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/integration/test-complain
TESTS += tests/integration/test-complain
tests_integration_test_complain_SOURCES = tests/integration/test-complain.c tests/integration/cli-util.h \
	tests/integration/run-util.h
tests_integration_test_complain_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_complain_LDADD = $(TEST_LIBS)

# Performs one named syscall and prints what happened; used by sandbox tests.
check_PROGRAMS += tests/helpers/try-syscall
tests_helpers_try_syscall_SOURCES = tests/helpers/try-syscall.c
tests_helpers_try_syscall_LDADD = libsecurer-core.la
endif

# Benchmark of the filter (not a test): `make bench-seccomp`.
noinst_PROGRAMS += bench/bench-seccomp
bench_bench_seccomp_SOURCES = bench/bench-seccomp.c
bench_bench_seccomp_LDADD = libsecurer-core.la

.PHONY: bench-seccomp
bench-seccomp: bench/bench-seccomp
	@./bench/bench-seccomp
EXTRA_DIST += tests/unit/data/seccomp/docker-like.json

# The cache of generated programs: trust rules, verification, and a real
# sandbox running from it.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-seccomp-cache
TESTS += tests/unit/test-seccomp-cache
tests_unit_test_seccomp_cache_SOURCES = tests/unit/test-seccomp-cache.c
tests_unit_test_seccomp_cache_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_seccomp_cache_LDADD = $(TEST_LIBS)
endif
