# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# make            build build/bpfprof
# make demo       install what the build needs, build, profile the system for 5 s (root)
# make test       install what the tests need, unit and end-to-end tests (root)
# make check      build and run the unit tests only: any user, nothing installed
# make fuzz       every reader under libFuzzer, FUZZ_SECONDS each (FUZZ=name for one)
# make valgrind   a short profile under valgrind's memcheck (root)
# make soak       SOAK_MINUTES (default 10) at 999 Hz with process churn: flat RSS, fds, maps;
#                  then as long --listen at 99 Hz, scraped: flat RSS, CPU as a one-shot run's (root)
# make deps       install the Debian packages the build and tests need (root)
# make deps-build install only those the build needs (root)
# make vmlinux    regenerate vmlinux/$(ARCH)/vmlinux.h from the running kernel
# make install    PREFIX=/usr/local DESTDIR=
# Knobs: V=1 (show commands), O=build (output folder), SANITIZE=address,undefined,
#        WERROR=1, CC, CLANG, BPFTOOL.

O        ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VERSION  := 0.1.0

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2)
endif

# libmicrohttpd and libcurl: their headers only; src/netlibs.c opens them when
# --listen or --push first needs them, so that every other run skips their load.
PKGS      := libbpf libelf libdw zlib
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) libmicrohttpd libcurl 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lbpf -ldw -lelf -lz) -liberty

CFLAGS   ?= -O2 -g -fno-omit-frame-pointer
override CFLAGS += -std=gnu11 -Wall -Wextra -Wno-missing-field-initializers \
		   -D_GNU_SOURCE -DBPFPROF_VERSION='"$(VERSION)"' \
		   -Iinclude -I$(O) $(PKG_CFLAGS) -MMD -MP
ifneq ($(WERROR),)
override CFLAGS += -Werror
endif
ifneq ($(SANITIZE),)
override CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
override LDFLAGS += -fsanitize=$(SANITIZE)
endif
LDLIBS   += $(PKG_LIBS) -pthread

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Iinclude \
	      -Wall -Wno-unused-function

SRCS      := $(wildcard src/*.c src/*/*.c)
OBJS      := $(SRCS:src/%.c=$(O)/src/%.o)
LIB_OBJS  := $(filter-out $(O)/src/main.o,$(OBJS))
SKEL      := $(O)/profile.skel.h

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(UNIT_SRCS:tests/unit/%.c=$(O)/tests/unit/%.o)
# The fuzz targets, linked into the unit tests too: they replay the saved inputs.
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
UNIT_OBJS += $(patsubst tests/fuzz/%.c,$(O)/tests/fuzz/%.o,tests/fuzz/common.c \
	     $(FUZZ_NAMES:%=tests/fuzz/fuzz_%.c))
WORKLOADS := $(patsubst tests/workloads/%.c,$(O)/tests/workloads/%,$(wildcard tests/workloads/*.c)) \
	     $(patsubst tests/workloads/%.cpp,$(O)/tests/workloads/%,$(wildcard tests/workloads/*.cpp))
TOOLS     := $(patsubst tests/tools/%.c,$(O)/tests/tools/%,$(wildcard tests/tools/*.c))

all: $(O)/bpfprof

$(O)/bpfprof: $(OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/src/%.o: src/%.c | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

# Every shared header: the program includes the runtimes' frame layouts too.
$(O)/profile.bpf.o: bpf/profile.bpf.c $(wildcard bpf/*.h) $(wildcard include/bpfprof/*.h) vmlinux/$(ARCH)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c -o $@ $<

$(SKEL): $(O)/profile.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name profile_bpf > $@.tmp && mv $@.tmp $@

# Each BPF header compiles alone, so the headers join in any order.
BPF_HEADERS_OK := $(patsubst bpf/%,$(O)/bpf/%.ok,$(wildcard bpf/*.bpf.h))
$(O)/bpf/%.ok: bpf/% $(wildcard bpf/*.h) include/bpfprof/sample.h include/bpfprof/bpf_settings.h \
	       include/bpfprof/unwind_row.h vmlinux/$(ARCH)/vmlinux.h
	$(call msg,BPF-HDR,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -x c -fsyntax-only $< && touch $@

# Tests -----------------------------------------------------------------------

$(O)/tests/unit/%.o: tests/unit/%.c | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -Itests/fuzz -c -o $@ $<

$(O)/tests/fuzz/%.o: tests/fuzz/%.c | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/fuzz -c -o $@ $<

$(O)/tests/unit-tests: $(UNIT_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Workloads are built the way their tests need them: -O2 with a frame pointer
# in every function, leaves included, and no tail calls, so frame-pointer
# stacks are whole. Clang, because GCC 12 drops the frame of leaf functions
# even with -mno-omit-leaf-frame-pointer.
WORKLOAD_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		   -fno-optimize-sibling-calls -pthread
$(O)/tests/workloads/%: tests/workloads/%.c tests/workloads/work.h
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(WORKLOAD_CFLAGS) -o $@ $< -lm
# The same without frame pointers, as distributions build: for DWARF unwinding.
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -pthread
$(O)/tests/workloads/%-nofp: tests/workloads/%.c tests/workloads/work.h
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(NOFP_CFLAGS) -o $@ $<
$(O)/tests/workloads/%-nofp: tests/workloads/%.cpp tests/workloads/work.h
	$(call msg,CLANG++,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG)++ $(NOFP_CFLAGS) -o $@ $<
# Its unwind tables only in .debug_frame (-g; .eh_frame has crt1's and the
# PLT's alone), and a stripped copy that has them in its debuglink file.
$(O)/tests/workloads/split-dframe: tests/workloads/split.c tests/workloads/work.h
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(NOFP_CFLAGS) -fno-asynchronous-unwind-tables -fno-unwind-tables -o $@ $<
$(O)/tests/workloads/split-dframe-strip: $(O)/tests/workloads/split-dframe
	$(call msg,STRIP,$@)
	$(Q)objcopy --only-keep-debug $< $@.debug
	$(Q)strip --strip-all -o $@ $<
	$(Q)objcopy --add-gnu-debuglink=$@.debug $@
NOFP_WORKLOADS := split qsort signal burst cxx plt spawn
WORKLOADS += $(addprefix $(O)/tests/workloads/,$(addsuffix -nofp,$(NOFP_WORKLOADS))) \
	     $(O)/tests/workloads/split-dframe \
	     $(O)/tests/workloads/split-dframe-strip
$(O)/tests/workloads/%: tests/workloads/%.cpp tests/workloads/work.h
	$(call msg,CLANG++,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG)++ $(WORKLOAD_CFLAGS) -o $@ $<
# A C host embedding LuaJIT, linked with libluajit-5.1.so.2 as nginx's Lua
# module is. Its headers come from libluajit2-5.1-dev (or libluajit-5.1-dev):
# without them it is not built, and the LuaJIT test says so.
LUAJIT_CFLAGS := $(shell pkg-config --cflags luajit 2>/dev/null)
LUAJIT_LIBS   := $(shell pkg-config --libs luajit 2>/dev/null)
ifeq ($(LUAJIT_LIBS),)
WORKLOADS := $(filter-out $(O)/tests/workloads/lua_host,$(WORKLOADS))
endif
# A Ruby C extension (rb_ext.so, loaded by rb_ext.rb), and a C host linked
# with libruby-3.1 (rb_host), built against ruby3.1-dev's headers; without
# them they are not built, and the Ruby test says so.
RUBY_EXT_CFLAGS := $(shell pkg-config --cflags ruby-3.1 2>/dev/null)
RUBY_LIBS       := $(shell pkg-config --libs ruby-3.1 2>/dev/null)
WORKLOADS := $(filter-out $(O)/tests/workloads/rb_ext $(O)/tests/workloads/rb_host,$(WORKLOADS))
ifneq ($(RUBY_EXT_CFLAGS),)
WORKLOADS += $(O)/tests/workloads/rb_ext.so $(O)/tests/workloads/rb_host
endif
$(O)/tests/workloads/rb_host: tests/workloads/rb_host.c
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(WORKLOAD_CFLAGS) $(RUBY_EXT_CFLAGS) -o $@ $< $(RUBY_LIBS)
$(O)/tests/workloads/rb_ext.so: tests/workloads/rb_ext.c tests/workloads/work.h
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(WORKLOAD_CFLAGS) $(RUBY_EXT_CFLAGS) -fPIC -shared -o $@ $<
$(O)/tests/workloads/lua_host: tests/workloads/lua_host.c tests/workloads/work.h
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(WORKLOAD_CFLAGS) $(LUAJIT_CFLAGS) -o $@ $< $(LUAJIT_LIBS)

# Fixtures for the ELF reader: a library with .symtab, a stripped copy with
# only .dynsym, and nm's view of its symbols as the expected answer.
FIXTURES := $(addprefix $(O)/tests/fixtures/,libfixture.so libfixture-stripped.so libfixture.nm)
$(O)/tests/fixtures/libfixture.so: tests/fixtures/fixture.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fPIC -shared -Wl,--build-id=sha1 -o $@ $<
$(O)/tests/fixtures/libfixture-stripped.so: $(O)/tests/fixtures/libfixture.so
	$(Q)strip --strip-all -o $@ $<
$(O)/tests/fixtures/libfixture.nm: $(O)/tests/fixtures/libfixture.so
	$(Q)nm -S --defined-only $< > $@

# Fixtures for debug information: a library with inlined calls, built with
# GCC (the workloads are Clang's), and stripped copies of it that find its
# separate debug file each one way (tests/fixtures/debuglayout.sh); a
# stripped split workload whose symbols are only in its debuglink file.
FIXTURES += $(O)/tests/fixtures/dbg/libdbg.so $(O)/tests/fixtures/dbg/layout \
	    $(O)/tests/fixtures/split-stripped
$(O)/tests/fixtures/dbg/libdbg.so: tests/fixtures/debuginfo.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fPIC -shared -Wl,--build-id=sha1 -o $@ $<
$(O)/tests/fixtures/dbg/layout: $(O)/tests/fixtures/dbg/libdbg.so tests/fixtures/debuglayout.sh
	$(call msg,GEN,$(@D))
	$(Q)sh tests/fixtures/debuglayout.sh $(@D) && touch $@
$(O)/tests/fixtures/split-stripped: $(O)/tests/workloads/split
	$(call msg,STRIP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)objcopy --only-keep-debug $< $@.debug
	$(Q)strip --strip-all -o $@ $<
	$(Q)objcopy --add-gnu-debuglink=$@.debug $@

# Call frame information for the unwinder's unit test, from hand-written
# directives (a signal trampoline as libc's); never run.
FIXTURES += $(O)/tests/fixtures/libunwind-cfi.so
$(O)/tests/fixtures/libunwind-cfi.so: tests/fixtures/unwind_cfi.S
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -nostdlib -o $@ $<

# Fixtures for the hostile-input tests: DWARF nested past any stack, split
# DWARF and dwz files whose other halves the test makes FIFOs, compressed
# debug sections (tests/fixtures/hostile.sh).
FIXTURES += $(O)/tests/fixtures/hostile/stamp
$(O)/tests/fixtures/hostile/stamp: tests/fixtures/hostile.sh tests/fixtures/debuginfo.c
	$(call msg,GEN,$(@D))
	$(Q)mkdir -p $(@D)
	$(Q)CC=$(CC) sh tests/fixtures/hostile.sh $(@D) && touch $@

# Helper programs the end-to-end tests run (checkers, decoders).
$(O)/tests/tools/%: tests/tools/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Iinclude -o $@ $< -lz -lm

# A developer's check of the Java namer against a live JVM (tests/probe/java_names_probe.c).
$(O)/tests/java_names_probe: $(O)/tests/probe/java_names_probe.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
# Seeds for fuzz_java_names from a live JVM (tests/probe/java_capture.c).
$(O)/tests/java_capture: $(O)/tests/probe/java_capture.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(O)/tests/probe/%.o: tests/probe/%.c | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

# A BPF program the tests load in the middle of a run (kernel code appearing).
$(O)/tests/busy.bpf.o: tests/bpf/busy.bpf.c vmlinux/$(ARCH)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c -o $@ $<
$(O)/tests/busy.skel.h: $(O)/tests/busy.bpf.o
	$(Q)$(BPFTOOL) gen skeleton $< name busy_bpf > $@.tmp && mv $@.tmp $@
$(O)/tests/bpf-busy: tests/bpf/bpf_busy.c $(O)/tests/busy.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) -O2 -g -I$(O)/tests $(PKG_CFLAGS) -o $@ $< $(PKG_LIBS)

# Debian's upstream LuaJIT (packages luajit, libluajit-5.1-2) beside the
# OpenResty build the tests install (luajit2): the two conflict, so it is
# unpacked here, never installed. Without Debian's mirror it is left out
# (one line says so) and the tests that read it skip.
LUAJIT_UPSTREAM := $(O)/luajit-upstream
$(LUAJIT_UPSTREAM)/.unpacked:
	$(call msg,GET,$(@D))
	$(Q)tmp=$$(mktemp -d) && ok= && \
	(cd $$tmp && apt-get download luajit libluajit-5.1-2) > $$tmp/log 2>&1 && \
	mkdir -p $(@D) && dpkg -x $$tmp/luajit_*.deb $(@D) && \
	dpkg -x $$tmp/libluajit-5.1-2_*.deb $(@D) && touch $@ && ok=1; rm -rf $$tmp; \
	[ -n "$$ok" ] || echo "$(@D): apt-get download luajit libluajit-5.1-2 failed;" \
		"the unit tests on Debian's upstream LuaJIT will skip"

test-build: $(O)/bpfprof $(O)/tests/unit-tests $(WORKLOADS) $(FIXTURES) $(TOOLS) $(O)/tests/bpf-busy \
	    $(BPF_HEADERS_OK) $(LUAJIT_UPSTREAM)/.unpacked

# What the tests need is installed first, so `make test` works on a fresh machine too.
test: deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)O=$(O) bash tests/run.sh $(TESTS)

# The unit tests alone, as any user: no packages installed, no root (the few
# checks that need BPF or root say SKIP). They read the workloads' binaries too.
check: $(O)/tests/unit-tests $(WORKLOADS) $(FIXTURES)
	$(Q)O=$(O) bash tests/run.sh unit

# make valgrind: a short profile of the whole machine under memcheck; any
# invalid access or leak fails it. Kernel-filled BPF map buffers (batch
# lookups) are unknown to valgrind's bpf() model, so values are not
# checked for definedness; tests/valgrind.supp holds its bpf() noise.
VALGRIND_FLAGS := --leak-check=full --show-leak-kinds=definite,indirect,possible \
		  --errors-for-leak-kinds=definite,indirect,possible --undef-value-errors=no \
		  --suppressions=tests/valgrind.supp --error-exitcode=1
valgrind: $(O)/bpfprof $(O)/tests/workloads/split
	$(O)/tests/workloads/split 4 & \
	valgrind $(VALGRIND_FLAGS) $(O)/bpfprof -F 99 -d 2 -o $(O)/valgrind.folded; rc=$$?; wait; \
	[ $$rc = 0 ] && LC_ALL=C awk -f tests/check_folded.awk $(O)/valgrind.folded > /dev/null && \
	echo "valgrind: no invalid accesses, no leaks"

# make soak: SOAK_MINUTES at 999 Hz over the whole machine with processes
# coming and going; RSS but the profile, fds and BPF maps each minute must
# stay flat, no sample lost (tests/soak.sh).
SOAK_MINUTES ?= 10
soak: $(O)/bpfprof $(O)/tests/workloads/split $(O)/tests/workloads/burst
	$(Q)O=$(O) SOAK_MINUTES=$(SOAK_MINUTES) bash tests/soak.sh
	$(Q)O=$(O) SOAK_MINUTES=$(SOAK_MINUTES) bash tests/soak_listen.sh

# Benchmarks -------------------------------------------------------------------

$(O)/tests/bench-writers: tests/bench/writers.c $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/tests/bench-symbols: tests/bench/symbols.c $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Time and memory to write each format for a profile of 50k distinct stacks;
# symbolization against eu-addr2line and addr2line; then bpfprof against perf
# and bpftrace on this machine (root; some 25 minutes, QUICK=1 for a short
# try), its table in tests/bench/results.md; then --unwind auto, fp and
# dwarf against perf --call-graph dwarf (some 15 minutes), in
# tests/bench/unwind.md; then whole stacks by program and the unwind tables'
# cost (some 6 minutes), in tests/bench/walk.md; then Python frames against
# --no-python on the same samples (some 4 minutes), in tests/bench/python.md;
# then LuaJIT frames against --no-lua on the same samples, over OpenResty's
# luajit2 and Debian's upstream LuaJIT (some 2 minutes), in tests/bench/luajit.md;
# then Ruby frames against --no-ruby on the same samples (some 1 minute), in
# tests/bench/ruby.md; then PHP frames against --no-php likewise (some 1 minute),
# in tests/bench/php.md;
# then --off-cpu against bcc's offcputime (PEER=path if offcputime-bpfcc
# cannot run here; some 2 minutes), in tests/bench/offcpu.md; then what
# bpfprof itself costs (CPU, start, RSS, the agent) against bcc's
# libbpf-tools profile where PEER_PROFILE=path names one (some 4 minutes),
# in tests/bench/cost.md; then the agent beside 100 light Python, Ruby,
# LuaJIT and C processes (some 4 minutes), in tests/bench/agent.md; then the
# agent sending OTLP to a stand-in receiver (10 minutes), in tests/bench/otlp.md.
$(O)/tests/bench-tables: tests/bench/tables.c $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench: $(O)/bpfprof $(O)/tests/workloads/stacks $(O)/tests/bench-writers $(O)/tests/bench-symbols \
       $(O)/tests/bench-tables $(WORKLOADS) $(LUAJIT_UPSTREAM)/.unpacked
	$(O)/tests/bench-writers 50000 5
	$(O)/tests/bench-symbols /lib/x86_64-linux-gnu/libc.so.6 20000
	O=$(O) bash tests/bench/run.sh
	O=$(O) bash tests/bench/unwind.sh
	O=$(O) bash tests/bench/walk.sh
	O=$(O) bash tests/bench/python.sh
	O=$(O) bash tests/bench/luajit.sh
	O=$(O) bash tests/bench/ruby.sh
	O=$(O) bash tests/bench/php.sh
	O=$(O) bash tests/bench/java.sh
	O=$(O) bash tests/bench/offcpu.sh
	O=$(O) PEER_PROFILE=$(PEER_PROFILE) bash tests/bench/cost.sh
	O=$(O) bash tests/bench/agent.sh
	O=$(O) bash tests/bench/otlp.sh

# Fuzzing ---------------------------------------------------------------------

# make fuzz: every reader of untrusted input under libFuzzer, FUZZ_SECONDS each
# (FUZZ=name for one), with AddressSanitizer and UBSan; a crash stops it. New
# inputs go to $(O)/fuzz/corpus/NAME, crashes to $(O)/fuzz/crashes/NAME: fix
# the reader, then keep the input in tests/fuzz/regressions/NAME (make test
# replays them). Seeds: tests/fuzz/corpus/NAME and real files gathered here.
FUZZ_SECONDS ?= 60
FUZZ         ?= $(FUZZ_NAMES)
FUZZ_O       := $(O)/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS   = $(filter-out -fsanitize=% -O2,$(CFLAGS)) -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link
# The readers, and what they need to build a profile and write it folded.
FUZZ_LIB     := $(addprefix $(FUZZ_O)/src/,$(addsuffix .o,symbols/elf symbols/dwarf \
		symbols/dwarf_image symbols/debuginfo procs symbols/kallsyms symbols/perfmap sideband \
		util intern profile output/out_folded output/out_pprof output/pb profile_read \
		symbols/demangle symbols/cfi_rows runtime/python_code runtime/python_offsets \
		runtime/interp_names runtime/luajit_file runtime/luajit_proto runtime/ruby_file \
		runtime/runtime_elf runtime/java_file runtime/java_names runtime/php_file))
FUZZ_COMMON  := $(FUZZ_O)/tests/common.o $(FUZZ_O)/tests/no_runtimes.o
FUZZ_BINS    := $(FUZZ_NAMES:%=$(FUZZ_O)/fuzz_%)

$(FUZZ_O)/src/%.o: src/%.c | $(SKEL)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -c -o $@ $<
$(FUZZ_O)/tests/%.o: tests/fuzz/%.c
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Itests/fuzz -c -o $@ $<
$(FUZZ_O)/tests/main-%.o: tests/fuzz/main.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -Itests/fuzz -DFUZZ_TARGET=fuzz_$* -c -o $@ $<
$(FUZZ_O)/fuzz_%: $(FUZZ_O)/tests/fuzz_%.o $(FUZZ_O)/tests/main-%.o $(FUZZ_COMMON) $(FUZZ_LIB)
	$(call msg,FUZZ-LD,$@)
	$(Q)$(CLANG) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)
$(FUZZ_O)/sbcapture: tests/fuzz/sbcapture.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -o $@ $<
.PRECIOUS: $(FUZZ_O)/src/%.o $(FUZZ_O)/tests/%.o
# Their dependency files are only read: no implicit rule may try to make one.
$(FUZZ_O)/%.d: ;

# Seeds from real files: small ELF files with and without DWARF, this
# machine's maps and kallsyms, side-band records of a real fork and exec.
$(FUZZ_O)/seeds.stamp: tests/fuzz/seeds.sh $(FUZZ_O)/sbcapture $(O)/tests/fixtures/libfixture-stripped.so
	$(call msg,GEN,$(FUZZ_O)/seeds)
	$(Q)O=$(O) CC=$(CC) CLANG=$(CLANG) sh tests/fuzz/seeds.sh $(FUZZ_O)/seeds && touch $@

fuzz-build: $(FUZZ_BINS) $(FUZZ_O)/seeds.stamp

fuzz: fuzz-build
	$(Q)O=$(O) FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh $(FUZZ)

# Installing ------------------------------------------------------------------

# The systemd unit goes where systemd looks for a local prefix's units; it is not enabled.
UNITDIR ?= $(PREFIX)/lib/systemd/system

install: $(O)/bpfprof
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(UNITDIR)
	install -m 0755 $(O)/bpfprof $(DESTDIR)$(PREFIX)/bin/bpfprof
	install -m 0644 src/bpfprof.8 $(DESTDIR)$(PREFIX)/share/man/man8/bpfprof.8
	sed 's|@BINDIR@|$(PREFIX)/bin|' systemd/bpfprof.service.in > $(DESTDIR)$(UNITDIR)/bpfprof.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/bpfprof.service

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/bpfprof $(DESTDIR)$(PREFIX)/share/man/man8/bpfprof.8 \
	      $(DESTDIR)$(UNITDIR)/bpfprof.service

clean:
	rm -rf $(O)

# The machine -----------------------------------------------------------------

# Debian 12 packages: the build (all the demo needs), then what the tests run
# (debootstrap builds the Debian roots of other releases' runtimes, tests/tools/debian_root.sh:
# trixie's and sid's newer ones, bullseye's python3.9; e2e/containers runs
# them in systemd-nspawn, of systemd-container; libssl-dev and xz-utils build
# tests/tools/static_ruby.sh's Ruby; e2e/php runs PHP's CLI with opcache (its JIT) and e2e/php_fpm
# php-fpm behind nginx and Composer, both beside Excimer, PHP's own sampling profiler; the
# receivers e2e/push and e2e/otlp run are Debian's /usr/bin/python3, e2e/otlp decodes with protoc).
DEB_BUILD := make gcc clang llvm pkg-config libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev \
	     libiberty-dev libmicrohttpd-dev libcurl4-openssl-dev
DEB_TEST  := util-linux e2fsprogs binutils mount golang-go protobuf-compiler python3 valgrind libclang-rt-14-dev \
	     dwz libxml2-utils chromium \
	     fonts-dejavu-core elfutils libc6-dbg python3.11-dbg nodejs linux-perf bpftrace time \
	     prometheus curl luajit2 libluajit2-5.1-dev nginx-light libnginx-mod-http-lua apache2-utils \
	     ruby3.1 ruby3.1-dev ruby-stackprof openjdk-17-jdk-headless debootstrap libssl-dev xz-utils \
	     systemd-container php8.2-cli php8.2-fpm php8.2-opcache php-excimer composer
DEB_PKGS  := $(DEB_BUILD) $(DEB_TEST)

# Installs what is missing of $(1), as root (with or without sudo).
define install_missing
	$(Q)missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -z "$$missing" ]; then echo "$@: all installed"; exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "$@: missing $$missing; run 'sudo make $@' (or as root)" >&2; exit 1; fi; \
	echo "$@: installing" $$missing; \
	apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing
endef

deps:
	$(call install_missing,$(DEB_PKGS))

deps-build:
	$(call install_missing,$(DEB_BUILD))

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h.tmp
	mv vmlinux/$(ARCH)/vmlinux.h.tmp vmlinux/$(ARCH)/vmlinux.h

# From a fresh clone to a real profile: what the build needs, the build, 5 s
# of the whole system while two processes of a workload with a known 2:1
# split keep both CPUs busy (at 1999 Hz, some 20,000 samples: the split
# shows to within 2 %).
demo: deps-build
	$(Q)$(MAKE) --no-print-directory all $(O)/tests/workloads/split
	$(O)/tests/workloads/split 6 & $(O)/tests/workloads/split 6 & \
	$(O)/bpfprof -F 1999 -d 5 -o $(O)/demo.folded; wait
	@echo "demo: collapsed stacks in $(O)/demo.folded ($$(wc -l < $(O)/demo.folded) lines); the busiest:"
	@awk '{ print $$NF "\t" substr($$0, 1, 150) }' $(O)/demo.folded | sort -rn | head -5
	@awk '/^split;/ && /;split_two_thirds( |;)/ { a += $$NF } /^split;/ && /;split_one_third( |;)/ { b += $$NF } \
	      END { printf "demo: split_two_thirds / split_one_third = %.3f (the workload splits 2:1)\n", b ? a / b : 0 }' \
	      $(O)/demo.folded

.PHONY: all test check test-build bench fuzz fuzz-build valgrind soak install uninstall clean deps deps-build \
	vmlinux demo
.DELETE_ON_ERROR:

-include $(OBJS:.o=.d) $(UNIT_OBJS:.o=.d) $(wildcard $(FUZZ_O)/*/*.d)
