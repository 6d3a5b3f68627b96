# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# make            build build/bpfprof
# make demo       install what is missing, build, profile the system for 5 s
# make test       unit and end-to-end tests (root)
# make deps       install the Debian packages the build and tests need (root)
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

PKGS      := libbpf libelf libdw zlib
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lbpf -ldw -lelf -lz) -liberty

CFLAGS   ?= -O2 -g
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
LDLIBS   += $(PKG_LIBS)

BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Iinclude \
	      -Wall -Wno-unused-function

SRCS      := $(wildcard src/*.c)
OBJS      := $(SRCS:src/%.c=$(O)/src/%.o)
LIB_OBJS  := $(filter-out $(O)/src/main.o,$(OBJS))
SKEL      := $(O)/profile.skel.h

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(UNIT_SRCS:tests/unit/%.c=$(O)/tests/unit/%.o)
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

$(O)/profile.bpf.o: bpf/profile.bpf.c include/bpfprof/sample.h vmlinux/$(ARCH)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c -o $@ $<

$(SKEL): $(O)/profile.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name profile_bpf > $@.tmp && mv $@.tmp $@

# Tests -----------------------------------------------------------------------

$(O)/tests/unit/%.o: tests/unit/%.c | $(SKEL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -c -o $@ $<

$(O)/tests/unit-tests: $(UNIT_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Workloads are built the way their tests need them: -O2 with a frame pointer
# in every function, leaves included, and no tail calls, so frame-pointer
# stacks are whole. Clang, because GCC 12 drops the frame of leaf functions
# even with -mno-omit-leaf-frame-pointer.
WORKLOAD_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		   -fno-optimize-sibling-calls -pthread
$(O)/tests/workloads/%: tests/workloads/%.c
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(WORKLOAD_CFLAGS) -o $@ $< -lm
# The same without frame pointers, as distributions build: for DWARF unwinding.
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -pthread
$(O)/tests/workloads/split-nofp: tests/workloads/split.c
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(NOFP_CFLAGS) -o $@ $<
$(O)/tests/workloads/qsort-nofp: tests/workloads/qsort.c
	$(call msg,CLANG,$@)
	$(Q)$(CLANG) $(NOFP_CFLAGS) -o $@ $<
WORKLOADS += $(O)/tests/workloads/split-nofp $(O)/tests/workloads/qsort-nofp
$(O)/tests/workloads/%: tests/workloads/%.cpp
	$(call msg,CLANG++,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG)++ $(WORKLOAD_CFLAGS) -o $@ $<

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

# Helper programs the end-to-end tests run (checkers, decoders).
$(O)/tests/tools/%: tests/tools/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Iinclude -o $@ $< -lz -lm

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

test-build: $(O)/bpfprof $(O)/tests/unit-tests $(WORKLOADS) $(FIXTURES) $(TOOLS) $(O)/tests/bpf-busy

test: test-build
	$(Q)O=$(O) bash tests/run.sh $(TESTS)

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
# symbolization against eu-addr2line and addr2line.
bench: $(O)/tests/bench-writers $(O)/tests/bench-symbols
	$(O)/tests/bench-writers 50000 5
	$(O)/tests/bench-symbols /lib/x86_64-linux-gnu/libc.so.6 20000

# Installing ------------------------------------------------------------------

install: $(O)/bpfprof
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0755 $(O)/bpfprof $(DESTDIR)$(PREFIX)/bin/bpfprof
	install -m 0644 src/bpfprof.8 $(DESTDIR)$(PREFIX)/share/man/man8/bpfprof.8

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/bpfprof $(DESTDIR)$(PREFIX)/share/man/man8/bpfprof.8

clean:
	rm -rf $(O)

# The machine -----------------------------------------------------------------

# Debian 12 packages: the build, then what the tests and the demo run.
DEB_BUILD := make gcc clang llvm pkg-config libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev \
	     libiberty-dev
DEB_TEST  := util-linux binutils mount golang-go protobuf-compiler valgrind libxml2-utils chromium \
	     fonts-dejavu-core elfutils libc6-dbg nodejs
DEB_PKGS  := $(DEB_BUILD) $(DEB_TEST)

deps:
	$(Q)missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -z "$$missing" ]; then echo "deps: all installed"; exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "deps: missing $$missing; run 'sudo make deps'" >&2; exit 1; fi; \
	echo "deps: installing" $$missing; \
	apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h.tmp
	mv vmlinux/$(ARCH)/vmlinux.h.tmp vmlinux/$(ARCH)/vmlinux.h

# From a fresh clone to a real profile: what is missing, the build, 5 s of the
# whole system while a workload with a known 2:1 split keeps one CPU busy.
demo: deps
	$(Q)$(MAKE) --no-print-directory all $(O)/tests/workloads/split
	$(O)/tests/workloads/split 6 & $(O)/bpfprof -F 99 -d 5 -o $(O)/demo.folded; wait
	@echo "demo: collapsed stacks in $(O)/demo.folded ($$(wc -l < $(O)/demo.folded) lines); the busiest:"
	@awk '{ print $$NF "\t" substr($$0, 1, 150) }' $(O)/demo.folded | sort -rn | head -5

.PHONY: all test test-build bench install uninstall clean deps vmlinux demo
.DELETE_ON_ERROR:

-include $(OBJS:.o=.d) $(UNIT_OBJS:.o=.d)
