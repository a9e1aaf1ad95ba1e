# oci — securer as an OCI runtime (securer-runc): sources, data and tests.
libsecurer_core_la_SOURCES += \
	src/lib/oci/oci.h \
	src/lib/oci/spec.c \
	src/lib/oci/container.c \
	src/lib/oci/cgroup.c \
	src/lib/oci/state.c \
	src/lib/oci/launch.c \
	src/lib/oci/policy.c \
	src/lib/oci/layer.c \
	src/lib/oci/report.c \
	src/lib/oci/netproxy.c \
	src/lib/oci/devices.c \
	src/lib/oci/selfexe.c

bin_PROGRAMS += securer-runc
securer_runc_SOURCES = src/runc/main.c
securer_runc_LDADD = libsecurer-core.la
securer_runc_LDFLAGS = $(AM_LDFLAGS) -static-libtool-libs
dist_man_MANS += docs/man/securer-runc.8

# securer-runc driven directly (as containerd's shim does), under podman and
# under a private containerd (ctr); each skips itself with the reason when
# not root, without busybox-static, or when the engine is missing or cannot
# run containers here even with runc.
if ENABLE_TESTS
TESTS += tests/oci/test-runc.sh tests/oci/test-podman.sh tests/oci/test-containerd.sh
endif
EXTRA_DIST += tests/oci/lib.sh tests/oci/test-runc.sh tests/oci/test-podman.sh tests/oci/test-containerd.sh \
	tests/oci/cri.py
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-oci-spec
TESTS += tests/unit/test-oci-spec
tests_unit_test_oci_spec_SOURCES = tests/unit/test-oci-spec.c
tests_unit_test_oci_spec_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_oci_spec_LDADD = $(TEST_LIBS)
endif
if ENABLE_TESTS
check_PROGRAMS += tests/unit/test-oci-devices
TESTS += tests/unit/test-oci-devices
tests_unit_test_oci_devices_SOURCES = tests/unit/test-oci-devices.c
tests_unit_test_oci_devices_CFLAGS = $(TEST_CFLAGS)
tests_unit_test_oci_devices_LDADD = $(TEST_LIBS)
endif
