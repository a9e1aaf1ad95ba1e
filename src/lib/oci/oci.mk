# oci — securer as an OCI runtime (securer-runc): sources, data and tests.
libsecurer_core_la_SOURCES += \
	src/lib/oci/oci.h \
	src/lib/oci/spec.c \
	src/lib/oci/container.c \
	src/lib/oci/cgroup.c \
	src/lib/oci/state.c \
	src/lib/oci/launch.c

bin_PROGRAMS += securer-runc
securer_runc_SOURCES = src/runc/main.c
securer_runc_LDADD = libsecurer-core.la
securer_runc_LDFLAGS = $(AM_LDFLAGS) -static-libtool-libs
