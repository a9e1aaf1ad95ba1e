# linux — sources, data and tests of this area.
libsecurer_core_la_SOURCES += src/lib/linux/mount.c src/lib/linux/childlog.c
libsecurer_core_la_SOURCES += src/lib/linux/net.c src/lib/linux/netproxy.h src/lib/linux/netproxy.c
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-rootfs
TESTS += tests/unit/test-rootfs
tests_unit_test_rootfs_SOURCES = tests/unit/test-rootfs.c tests/unit/rootfs-harness.h
tests_unit_test_rootfs_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_rootfs_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-net
TESTS += tests/unit/test-net
tests_unit_test_net_SOURCES = tests/unit/test-net.c tests/unit/rootfs-harness.h
tests_unit_test_net_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_net_LDADD = $(TEST_LIBS)
endif
libsecurer_core_la_SOURCES += src/lib/linux/cgroup.c
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-cgroup
TESTS += tests/unit/test-cgroup
tests_unit_test_cgroup_SOURCES = tests/unit/test-cgroup.c
tests_unit_test_cgroup_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_cgroup_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/helpers/fsprobe
tests_helpers_fsprobe_SOURCES = tests/helpers/fsprobe.c
# Without the sanitizers: a sanitized program cannot be linked statically.
tests_helpers_fsprobe_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
tests_helpers_fsprobe_LDFLAGS = -all-static
tests_helpers_fsprobe_LDADD =
endif
libsecurer_core_la_SOURCES += \
	src/lib/linux/launch.h \
	src/lib/linux/spawn.c \
	src/lib/linux/sync.c \
	src/lib/linux/userns.c \
	src/lib/linux/hostids.c \
	src/lib/linux/init.c \
	src/lib/linux/caps.c \
	src/lib/linux/rlimit.c \
	src/lib/linux/env.c \
	src/lib/linux/fds.c \
	src/lib/linux/status.c
libsecurer_core_la_SOURCES += src/lib/linux/probe.c
securerinclude_HEADERS += include/securer/probe.h
if ENABLE_TESTS
check_PROGRAMS += tests/integration/test-fs
TESTS += tests/integration/test-fs
tests_integration_test_fs_SOURCES = tests/integration/test-fs.c tests/integration/run-util.h
tests_integration_test_fs_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_fs_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/integration/test-fs-cli
TESTS += tests/integration/test-fs-cli
tests_integration_test_fs_cli_SOURCES = tests/integration/test-fs-cli.c
tests_integration_test_fs_cli_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_fs_cli_LDADD = $(TEST_LIBS)
endif

# Tenants: per-sandbox host ids and per-user kernel counters, two sandboxes at once.
if ENABLE_TESTS
check_PROGRAMS += tests/helpers/tenant-probe
tests_helpers_tenant_probe_SOURCES = tests/helpers/tenant-probe.c
# Without the sanitizers, like attack-probe: it runs under sandbox limits.
tests_helpers_tenant_probe_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
tests_helpers_tenant_probe_LDFLAGS =
check_PROGRAMS += tests/integration/test-tenants
TESTS += tests/integration/test-tenants
tests_integration_test_tenants_SOURCES = tests/integration/test-tenants.c tests/integration/run-util.h
tests_integration_test_tenants_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_tenants_LDADD = $(TEST_LIBS)
endif
libsecurer_core_la_SOURCES += src/lib/linux/zygote.h src/lib/linux/zygote.c src/lib/linux/zygote-confine.c src/lib/linux/template.h src/lib/linux/template.c
if ENABLE_TESTS
check_PROGRAMS += tests/integration/test-zygote
TESTS += tests/integration/test-zygote
tests_integration_test_zygote_SOURCES = tests/integration/test-zygote.c tests/helpers/zygote-wire.h tests/integration/run-util.h
tests_integration_test_zygote_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_zygote_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/integration/test-template
TESTS += tests/integration/test-template
tests_integration_test_template_SOURCES = tests/integration/test-template.c
tests_integration_test_template_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_template_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
# Without the sanitizers: it runs in a sandbox that is not prepared for
# their runtime, and loads the (uninstrumented) template module.
check_PROGRAMS += tests/helpers/template-prog
tests_helpers_template_prog_SOURCES = tests/helpers/template-prog.c
tests_helpers_template_prog_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
# Not linked with a sanitizer runtime either: it runs under the policy's
# `limit as`, where the runtime's reservations do not fit.
tests_helpers_template_prog_LDFLAGS =
tests_helpers_template_prog_LDADD = -ldl
endif
if ENABLE_TESTS
check_PROGRAMS += tests/helpers/zygote-template
tests_helpers_zygote_template_SOURCES = tests/helpers/zygote-template.c tests/helpers/zygote-wire.h
tests_helpers_zygote_template_CFLAGS = $(AM_CFLAGS)
tests_helpers_zygote_template_LDADD = libsecurer-core.la
endif

# network allow: the proxy, driven from real sandboxes in a test namespace.
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-netrule tests/integration/test-netproxy
TESTS += tests/unit/test-netrule tests/integration/test-netproxy
tests_unit_test_netrule_SOURCES = tests/unit/test-netrule.c
tests_unit_test_netrule_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_netrule_LDADD = $(TEST_LIBS)
tests_integration_test_netproxy_SOURCES = tests/integration/test-netproxy.c tests/integration/run-util.h
tests_integration_test_netproxy_CFLAGS = $(TEST_CFLAGS)
tests_integration_test_netproxy_LDADD = $(TEST_LIBS) -lpthread
endif
