# libFuzzer targets: `make fuzz` builds them, `make fuzz-run` runs each of
# FUZZ_TARGETS for FUZZ_TIME seconds.  They are built with clang straight
# from the sources, so that they never depend on how the rest of the tree
# was configured, and never by `make` or `make check`.  Only the code that
# interprets the input carries coverage instrumentation; the code it calls
# is built with the sanitizers alone, so the fuzzer spends its time where
# the inputs are interpreted.
FUZZ_CC = clang
FUZZ_SAN = -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CPPFLAGS = -std=gnu11 -I. $(AM_CPPFLAGS) -I$(top_srcdir)/src/cli -I$(top_srcdir)/tests/fuzz \
	$(SECCOMP_CFLAGS) $(JANSSON_CFLAGS)
FUZZ_LIBS = $(SECCOMP_LIBS) $(JANSSON_LIBS) -lpthread
FUZZ_TIME ?= 60
FUZZ_TARGETS ?= policy session serve

# $(call fuzz_build,INSTRUMENTED,SUPPORT) builds $@.
fuzz_build = mkdir -p tests/fuzz/obj/$(notdir $@) && \
	for f in $(2); do \
	  $(FUZZ_CC) $(FUZZ_SAN) $(FUZZ_CPPFLAGS) -c $$f -o tests/fuzz/obj/$(notdir $@)/$$(basename $$f .c).o \
	    || exit 1; \
	done; \
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $(FUZZ_CPPFLAGS) -o $@ $(1) \
	  tests/fuzz/obj/$(notdir $@)/*.o $(FUZZ_LIBS)

# The policy loader, text and JSON.
FUZZ_POLICY_SRCS = \
	$(top_srcdir)/tests/fuzz/fuzz-policy.c \
	$(top_srcdir)/src/lib/policy/diag.c \
	$(top_srcdir)/src/lib/policy/lexer.c \
	$(top_srcdir)/src/lib/policy/parser.c \
	$(top_srcdir)/src/lib/policy/resolve.c \
	$(top_srcdir)/src/lib/policy/defer.c \
	$(top_srcdir)/src/lib/policy/json.c \
	$(top_srcdir)/src/lib/policy/text.c \
	$(top_srcdir)/src/lib/policy/policy.c \
	$(top_srcdir)/src/lib/policy/expect.c \
	$(top_srcdir)/src/lib/policy/netrule.c \
	$(top_srcdir)/src/lib/linux/view.c
FUZZ_POLICY_SUPPORT = \
	$(top_srcdir)/src/lib/linux/landlock.c \
	$(top_srcdir)/src/lib/linux/mount.c \
	$(top_srcdir)/src/lib/linux/childlog.c \
	$(top_srcdir)/src/lib/seccomp/ruletext.c \
	$(top_srcdir)/src/lib/seccomp/names.c \
	$(top_srcdir)/src/lib/seccomp/groups.c \
	$(top_srcdir)/src/lib/seccomp/constants.c \
	$(top_srcdir)/src/lib/seccomp/compile.c \
	$(top_srcdir)/src/lib/seccomp/argwidth.c \
	$(top_srcdir)/src/lib/seccomp/cache.c \
	$(top_srcdir)/src/lib/seccomp/emulate.c \
	$(top_srcdir)/src/lib/sha256.c \
	$(top_srcdir)/src/lib/error.c \
	$(top_srcdir)/src/lib/paths.c \
	$(top_srcdir)/src/lib/suggest.c
tests/fuzz/fuzz-policy: $(FUZZ_POLICY_SRCS) $(FUZZ_POLICY_SUPPORT) config.h
	$(AM_V_CC)$(call fuzz_build,$(FUZZ_POLICY_SRCS),$(FUZZ_POLICY_SUPPORT))

# Shared by the targets fed JSON lines: the feeding, and what the session
# code they exercise calls without needing coverage.
FUZZ_LINES_SUPPORT = \
	$(top_srcdir)/tests/fuzz/fuzz-lines.c \
	$(top_srcdir)/src/lib/session/prevalidate.c \
	$(top_srcdir)/src/lib/session/toolcmd.c \
	$(top_srcdir)/src/lib/session/loop.c \
	$(top_srcdir)/src/lib/error.c
FUZZ_LINES_HDRS = $(top_srcdir)/tests/fuzz/fuzz-lines.h $(top_srcdir)/src/lib/session/internal.h \
	$(top_srcdir)/src/cli/serve_request.h config.h

# What R writes on a session's channel: framing, messages, values, tool
# arguments against a registry.
FUZZ_SESSION_SRCS = \
	$(top_srcdir)/tests/fuzz/fuzz-session.c \
	$(top_srcdir)/src/lib/session/channel.c \
	$(top_srcdir)/src/lib/session/protocol.c \
	$(top_srcdir)/src/lib/session/value.c \
	$(top_srcdir)/src/lib/session/tools.c
tests/fuzz/fuzz-session: $(FUZZ_SESSION_SRCS) $(FUZZ_LINES_SUPPORT) $(FUZZ_LINES_HDRS)
	$(AM_V_CC)$(call fuzz_build,$(FUZZ_SESSION_SRCS),$(FUZZ_LINES_SUPPORT))

# What a client sends to `securer serve`, up to where a session is needed.
FUZZ_SERVE_SRCS = \
	$(top_srcdir)/tests/fuzz/fuzz-serve.c \
	$(top_srcdir)/src/cli/serve_request.c \
	$(top_srcdir)/src/lib/policy/netrule.c \
	$(top_srcdir)/src/lib/session/value.c \
	$(top_srcdir)/src/lib/session/tools.c
FUZZ_SERVE_SUPPORT = $(FUZZ_LINES_SUPPORT) \
	$(top_srcdir)/src/lib/session/channel.c \
	$(top_srcdir)/src/lib/session/protocol.c
tests/fuzz/fuzz-serve: $(FUZZ_SERVE_SRCS) $(FUZZ_SERVE_SUPPORT) $(FUZZ_LINES_HDRS)
	$(AM_V_CC)$(call fuzz_build,$(FUZZ_SERVE_SRCS),$(FUZZ_SERVE_SUPPORT))

.PHONY: fuzz fuzz-run
fuzz: tests/fuzz/fuzz-policy tests/fuzz/fuzz-session tests/fuzz/fuzz-serve
# Each run starts from the checked-in seeds (and what earlier runs found,
# kept in tests/fuzz/corpus/NAME); a crash stops the run and leaves the
# input in crash-* in the build directory.
fuzz-run: $(FUZZ_TARGETS:%=tests/fuzz/fuzz-%)
	@mkdir -p $(FUZZ_TARGETS:%=tests/fuzz/corpus/%)
	@for t in $(FUZZ_TARGETS); do \
	  case $$t in \
	    policy) cp $(top_srcdir)/policies/*.policy $(top_srcdir)/policies/base/*.policy \
	              $(top_srcdir)/tests/unit/data/policy/*.policy $(top_srcdir)/tests/policies/*.expect \
	              tests/fuzz/corpus/policy/; \
	            len=4096 ;; \
	    *) cp $(top_srcdir)/tests/fuzz/seeds/$$t/* tests/fuzz/corpus/$$t/; len=8192 ;; \
	  esac; \
	  echo "fuzz-$$t: $(FUZZ_TIME) s"; \
	  SECURER_DATADIR=$(abs_top_srcdir) tests/fuzz/fuzz-$$t -max_total_time=$(FUZZ_TIME) \
	    -dict=$(top_srcdir)/tests/fuzz/$$t.dict -max_len=$$len -timeout=10 -rss_limit_mb=2048 \
	    tests/fuzz/corpus/$$t || exit 1; \
	done
CLEANFILES += tests/fuzz/fuzz-policy tests/fuzz/fuzz-session tests/fuzz/fuzz-serve

EXTRA_DIST += tests/fuzz/fuzz-policy.c tests/fuzz/fuzz-session.c tests/fuzz/fuzz-serve.c \
	tests/fuzz/fuzz-lines.c tests/fuzz/fuzz-lines.h tests/fuzz/policy.dict tests/fuzz/session.dict \
	tests/fuzz/serve.dict tests/fuzz/seeds
