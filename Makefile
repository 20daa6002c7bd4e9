# SPDX-License-Identifier: MIT
# nowait: one plain, non-recursive Makefile. Everything is built into $(B)/.
#
#   make            library, preload, bench, tests
#   make test       run the test suite (T=name runs one test)
#   make bench      run the benchmarks side by side (kernel vs nowait),
#                   JSON lines and an SVG in build/bench/
#   make check      the suite under AddressSanitizer + UBSan
#   make tsan       the suite under ThreadSanitizer
#   make layers     check the engine's layering rules (tools/layers.sh)
#   make apps       real Debian programs on nowait and on the kernel (CI)
#   make fresh-check  `make test` in a bare Debian 12 chroot (root; CI)
#   make fuzz       the libFuzzer harnesses of test/fuzz/, FUZZ_S seconds each
#   make faults     fault injection (allocations, threads, fd and memlock limits)

B        ?= build
CC       ?= gcc
# One version, in include/nowait.h (NOWAIT_VERSION_MAJOR/MINOR/PATCH).
VERSION  := $(shell sed -n 's/^\#define NOWAIT_VERSION_[A-Z]* *\([0-9]*\)$$/\1/p' \
		include/nowait.h | paste -sd.)
PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
INCDIR   ?= $(PREFIX)/include
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
# The preload library is not linked against: it lives in a directory of
# its own under LIBDIR (FHS), where an installed nowait-run looks for it.
PRELOADDIR ?= $(LIBDIR)/nowait

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	    -Wno-unused-parameter
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 $(WARN) -D_GNU_SOURCE -pthread -fvisibility=hidden \
	    -Iinclude -iquote src -MMD -MP
ifeq ($(WERROR),1)
CFLAGS   += -Werror
endif
LDLIBS   := -pthread
SOLINK   := -Wl,--version-script=src/libnowait.map
ifneq ($(SANITIZE),)
CFLAGS   += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=$(SANITIZE)
else
SOLINK   += -Wl,-z,defs
endif

ifeq ($(V),1)
Q :=
else
Q := @
endif

LIB_SRCS   := $(wildcard src/*.c)
# NOTRACE=1: the engine without its trace and statistics code (src/trace.h),
# for measuring what they cost while off (tools/trace-cost.sh).
ifeq ($(NOTRACE),1)
CFLAGS     += -DNW_NO_TRACE
LIB_SRCS   := $(filter-out src/trace.c src/stats.c,$(LIB_SRCS))
endif
LIB_OBJS   := $(LIB_SRCS:%.c=$(B)/obj/%.o)
TEST_SRCS  := $(filter-out test/helpers.c test/rawring.c,$(wildcard test/*.c))
TEST_PROGS := $(TEST_SRCS:test/%.c=$(B)/test/%.t)
BENCH_SRCS := $(wildcard bench/*.c)
PRELOAD_SRCS := $(wildcard preload/*.c)

HAVE_LIBURING := $(shell echo 'int main(void){return 0;}' | $(CC) -x c \
		   -include liburing.h - -o /dev/null -luring 2>/dev/null && echo 1)
ifeq ($(HAVE_LIBURING),1)
TEST_CFLAGS := -DHAVE_LIBURING=1
TEST_LIBS   := -luring
endif

# libuv (libuv1-dev) for the fileread benchmark's thread-pool baseline.
HAVE_LIBUV := $(shell echo 'int main(void){return 0;}' | $(CC) -x c \
		-include uv.h - -o /dev/null -luv 2>/dev/null && echo 1)
ifeq ($(HAVE_LIBUV),1)
BENCH_CFLAGS := -DHAVE_LIBUV=1
BENCH_LIBS   := -luv
endif
# liburing.so.2 for the liburing workload (the preload's interposers).
ifeq ($(HAVE_LIBURING),1)
BENCH_CFLAGS += -DHAVE_LIBURING=1
BENCH_LIBS   += -luring
endif

# What was found decides how tests and benches are compiled, and `make
# test` / `make bench` may install it first; where the preload is
# installed is compiled into nowait-run. A stamp that changes with them
# makes those objects build again (not only when their sources change).
OPT_STAMP := $(B)/build-config
OPT_NOW   := liburing=$(HAVE_LIBURING) libuv=$(HAVE_LIBUV) preloaddir=$(PRELOADDIR)
ifneq ($(OPT_NOW),$(shell cat $(OPT_STAMP) 2>/dev/null))
$(shell mkdir -p $(B) && echo '$(OPT_NOW)' > $(OPT_STAMP))
endif

.PHONY: fuzz faults all lib test check tsan bench install uninstall install-check deb format format-check clean deps-test deps-bench conformance apps layers fresh-check
TOOLS      := $(B)/nowait-run $(B)/nowait-eperm

all: lib $(B)/nowait-bench $(TEST_PROGS) $(B)/libnowait-preload.so $(TOOLS)

# nowait-eperm shares the preload's seccomp filter (preload/uring-filter.h).
$(B)/obj/tools/%.o: CFLAGS += -iquote preload \
	-DNOWAIT_PRELOADDIR='"$(PRELOADDIR)"'
$(B)/obj/tools/nowait-run.o: $(OPT_STAMP)

$(B)/%: $(B)/obj/tools/%.o
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^

lib: $(B)/libnowait.a $(B)/libnowait.so $(B)/nowait.pc

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -fPIC -c $< -o $@

$(B)/libnowait.a: $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/libnowait.so: $(LIB_OBJS) src/libnowait.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libnowait.so.0 $(SOLINK) $(LDFLAGS) \
		-o $@ $(LIB_OBJS) $(LDLIBS)

# The preload library (LD_PRELOAD): its own interposers plus the engine.
$(B)/libnowait-preload.so: $(PRELOAD_SRCS:%.c=$(B)/obj/%.o) $(LIB_OBJS)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-z,now $(LDFLAGS) -o $@ $^ $(LDLIBS) -ldl

$(B)/nowait.pc: nowait.pc.in include/nowait.h
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|;s|@LIBDIR@|$(LIBDIR)|;s|@INCDIR@|$(INCDIR)|;s|@VERSION@|$(VERSION)|' $< > $@

# The bench drives its rings with the tests' raw ring (test/rawring.h).
$(B)/obj/bench/%.o: CFLAGS += $(BENCH_CFLAGS) -iquote test

$(BENCH_SRCS:%.c=$(B)/obj/%.o): $(OPT_STAMP)

$(B)/nowait-bench: $(BENCH_SRCS:%.c=$(B)/obj/%.o) $(B)/obj/test/rawring.o \
		   $(B)/libnowait.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(BENCH_LIBS) -lm

$(B)/obj/test/%.o: test/%.c $(OPT_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(TEST_CFLAGS) -c $< -o $@

$(B)/test/%.t: $(B)/obj/test/%.o $(B)/obj/test/helpers.o \
	       $(B)/obj/test/rawring.o $(B)/libnowait.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(TEST_LIBS) $(LDLIBS)

# The README's two commands install what they need when run as root.
deps-test:
	@tools/install-deps test
deps-bench:
	@tools/install-deps bench

test: deps-test
	$(Q)$(MAKE) --no-print-directory all
	$(Q)B=$(B) T="$(T)" test/runtests.sh

check:
	$(Q)$(MAKE) --no-print-directory B=build/asan SANITIZE=address,undefined test

tsan:
	$(Q)$(MAKE) --no-print-directory B=build/tsan SANITIZE=thread test

# clang's libFuzzer with ASan+UBSan (tools/fuzz.sh): fails on a crash, a
# hang, a leak or an unlisted kernel/nowait difference.
FUZZ_S ?= 60
fuzz:
	$(Q)tools/install-deps fuzz
	$(Q)B=$(B) FUZZ_S=$(FUZZ_S) tools/fuzz.sh

# Fault injection on the user engine (tools/faults.sh): a selection of
# test/ programs with the engine's allocations and thread creation failing
# one call in FAULT_N, and under RLIMIT_NOFILE 64 and RLIMIT_MEMLOCK 0;
# fails on a crash, a hang, a lost CQE or an error that is not the kernel's.
FAULT_N ?= 40
FAULT_SEEDS ?= 4
faults:
	$(Q)B=$(B) FAULT_N=$(FAULT_N) FAULT_SEEDS=$(FAULT_SEEDS) tools/faults.sh

# Every workload once, as JSON lines (tee'd to the terminal), then the
# picture of the run beside them: $(B)/bench/bench.jsonl and bench.svg.
# The sub-make reads the Makefile again, after deps-bench installed what
# it installs (libuv is found then). hackbench and liburing run under the
# preload library, found next to nowait-bench.
bench: deps-bench
	$(Q)$(MAKE) --no-print-directory $(B)/nowait-bench $(B)/libnowait-preload.so
	$(Q)mkdir -p $(B)/bench
	$(Q){ $(B)/nowait-bench all --json; echo $$? > $(B)/bench/status; } | \
	    tee $(B)/bench/bench.jsonl
	$(Q)tools/bench-plot $(B)/bench/bench.jsonl $(B)/bench/bench.svg
	$(Q)exit $$(cat $(B)/bench/status)

# liburing's test suites (2.3 of Debian 12, 2.15 of sid) and fio from Debian
# source packages, run on nowait and on the kernel (tools/conformance.sh;
# downloads into $(B)/conformance).
conformance: deps-test
	$(Q)$(MAKE) --no-print-directory all
	$(Q)B=$(B) tools/conformance.sh

# Real programs from Debian 12 (qemu-io, MariaDB, runc+fio, Node.js, mpd),
# each on the kernel and on nowait under an EPERM profile, compared
# (tools/apps.sh; works in $(B)/apps; APPS=case... runs some).
apps:
	$(Q)tools/install-deps apps || echo "apps: some packages could not be installed"
	$(Q)$(MAKE) --no-print-directory all
	$(Q)B=$(B) APPS="$(APPS)" tools/apps.sh

# The README's `make test` on a bare Debian 12 (debootstrap minbase in a
# chroot, as root): it must install what it needs and pass
# (tools/fresh-machine.sh; works in $(B)/fresh).
fresh-check:
	$(Q)B=$(B) tools/fresh-machine.sh

# The engine's layering rules (src/FLOORS; issue 11): the dependency graph
# of the library objects from nm, and a few grep rules on the sources.
layers: $(LIB_OBJS)
	$(Q)tools/layers.sh $(B)/obj/src src

# PREFIX, LIBDIR, BINDIR, MANDIR, PRELOADDIR and DESTDIR as usual. The
# man pages go in when there are any (man/*.[0-9]).
MAN_PAGES := $(wildcard man/*.[0-9])
INSTALLED := $(INCDIR)/nowait.h $(LIBDIR)/libnowait.a \
	     $(LIBDIR)/libnowait.so.$(VERSION) $(LIBDIR)/libnowait.so.0 \
	     $(LIBDIR)/libnowait.so $(LIBDIR)/pkgconfig/nowait.pc \
	     $(PRELOADDIR)/libnowait-preload.so \
	     $(addprefix $(BINDIR)/,nowait-run nowait-bench nowait-eperm) \
	     $(foreach m,$(MAN_PAGES),$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))

install: lib $(B)/libnowait-preload.so $(TOOLS) $(B)/nowait-bench
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(PRELOADDIR)
	install -m 644 include/nowait.h $(DESTDIR)$(INCDIR)/
	install -m 644 $(B)/libnowait.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(B)/libnowait.so $(DESTDIR)$(LIBDIR)/libnowait.so.$(VERSION)
	ln -sf libnowait.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libnowait.so.0
	ln -sf libnowait.so.0 $(DESTDIR)$(LIBDIR)/libnowait.so
	install -m 644 $(B)/nowait.pc $(DESTDIR)$(LIBDIR)/pkgconfig/
	install -m 755 $(B)/libnowait-preload.so $(DESTDIR)$(PRELOADDIR)/
	install -m 755 $(TOOLS) $(B)/nowait-bench $(DESTDIR)$(BINDIR)/
	$(foreach m,$(MAN_PAGES),install -D -m 644 $(m) \
		$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m));)

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(PRELOADDIR) 2>/dev/null

# Debian packages (debian/: libnowait0, libnowait-dev, nowait-tools), built
# with Debian's own tools from a copy of the tracked tree into $(B)/deb/;
# lintian checks them (errors fail). Needs debhelper and lintian (root:
# tools/install-deps deb installs them).
deb:
	$(Q)tools/install-deps deb
	$(Q)rm -rf $(B)/deb && mkdir -p $(B)/deb/nowait-$(VERSION)
	$(Q)git ls-files -co --exclude-standard | tar -cf - -T - | \
		tar -xf - -C $(B)/deb/nowait-$(VERSION)
	$(Q)cd $(B)/deb/nowait-$(VERSION) && dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
		{ tail -30 ../build.log; exit 1; }
	$(Q)lintian --fail-on error $(B)/deb/*.changes
	$(Q)ls $(B)/deb/*.deb

# Install into a scratch prefix, run the installed nowait-run (which must
# find the installed preload), uninstall; then the same through DESTDIR;
# and find no file left behind.
install-check:
	$(Q)d=$$(mktemp -d) && \
	$(MAKE) --no-print-directory -s install PREFIX=$$d/usr B=$(B)/install-check && \
	NOWAIT_LOG=1 $$d/usr/bin/nowait-run --user -- $$d/usr/bin/nowait-bench nop -t 0.05 --engine=user >/dev/null && \
	$(MAKE) --no-print-directory -s uninstall PREFIX=$$d/usr B=$(B)/install-check && \
	$(MAKE) --no-print-directory -s install DESTDIR=$$d/staged B=$(B)/install-check && \
	$(MAKE) --no-print-directory -s uninstall DESTDIR=$$d/staged B=$(B)/install-check && \
	left=$$(find $$d -type f -o -type l) && rm -rf $$d && \
	if [ -n "$$left" ]; then echo "install-check: left behind: $$left"; exit 1; fi && \
	echo "install-check: OK"

FORMAT_FILES = $(wildcard include/*.h src/*.[ch] test/*.[ch] test/fuzz/*.[ch] test/faults/*.[ch] bench/*.[ch] preload/*.[ch] tools/*.c)
format:
	clang-format -i $(FORMAT_FILES)
format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

clean:
	rm -rf build

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
