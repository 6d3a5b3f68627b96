// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The unwinder on hand-made stacks over the CFI of tests/fixtures/
 * unwind_cfi.S: through a signal frame built as libc's __restore_rt
 * (expressions, the 'S' flag, the interrupted pc taken as it is), from
 * inside rt_sigreturn, and cut by depth and by the end of the copied stack.
 */
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/unwind.h"
#include "unit.h"

#define S 0x7ffd00000000ULL	/* the handler's sp: where the copy starts */
#define T (S + 8)		/* the trampoline's sp: the saved context */
#define L (S + 256)		/* the interrupted rsp */

static Dwarf_CFI *fixture_cfi;

/* The fixture as if loaded at 0: a pc is its own address in the file. */
static bool cfi_at(void *ctx, uint64_t pc, uint64_t *vaddr, Dwarf_CFI *cfi[2])
{
	(void)ctx;
	*vaddr = pc;
	cfi[0] = fixture_cfi;
	cfi[1] = NULL;
	return true;
}

/* A function's address and size from the fixture's .symtab; 0 if not there. */
static uint64_t symbol(Elf *elf, const char *name, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *data;
	size_t i;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(data = elf_getdata(scn, NULL)))
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++)
			if (gelf_getsym(data, i, &sym) &&
			    !strcmp(elf_strptr(elf, sh.sh_link, sym.st_name) ?: "", name)) {
				if (size)
					*size = sym.st_size;
				return sym.st_value;
			}
	}
	return 0;
}

static void put(uint8_t *stack, uint64_t addr, uint64_t value)
{
	memcpy(stack + (addr - S), &value, 8);
}

static bool same(const uint64_t *got, uint32_t n, const uint64_t *want, uint32_t nwant)
{
	return n == nwant && !memcmp(got, want, n * sizeof(*got));
}

void test_unwind(void)
{
	uint64_t outer_ret, framed_ret, leaf, tramp, tramp_size = 0, handler, ips[16];
	uint8_t stack[512] = { 0 };
	struct unwinder u;
	enum unwind_end end;
	char path[4096];
	uint32_t n;
	Elf *elf;
	int fd;

	snprintf(path, sizeof(path), "%s/libunwind-cfi.so", unit_fixtures);
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	fixture_cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	outer_ret = elf ? symbol(elf, "fx_outer_ret", NULL) : 0;
	framed_ret = elf ? symbol(elf, "fx_framed_ret", NULL) : 0;
	leaf = elf ? symbol(elf, "fx_leaf", NULL) : 0;
	tramp = elf ? symbol(elf, "fx_tramp", &tramp_size) : 0;
	handler = elf ? symbol(elf, "fx_handler", NULL) : 0;
	if (!CHECK(fixture_cfi && outer_ret && framed_ret && leaf && tramp_size && handler,
		   "the fixture %s has CFI and its symbols (make test-build)", path))
		goto out;

	/* The stack: handler -> trampoline's saved context -> fx_leaf -> fx_framed -> fx_outer. */
	put(stack, S, tramp);		/* the handler returns to the trampoline's first byte */
	put(stack, T + 16, L + 8);	/* saved rbp: fx_framed's frame */
	put(stack, T + 24, L);		/* saved rsp */
	put(stack, T + 32, leaf);	/* saved rip: fx_leaf's first instruction */
	put(stack, L, framed_ret);	/* fx_leaf's return address */
	put(stack, L + 8, 0x1234);	/* fx_framed's saved rbp */
	put(stack, L + 16, outer_ret);	/* fx_framed's return address */

	unwinder_init(&u);
	{
		struct unwind_regs regs = { handler + 1, S, 0xdead, false };
		uint64_t want[] = { handler + 1, tramp, leaf, framed_ret - 1, outer_ret - 1 };

		n = unwind_stack(&u, cfi_at, NULL, &regs, stack, sizeof(stack), ips, 16, &end);
		CHECK(same(ips, n, want, 5) && end == UNWIND_COMPLETE,
		      "through the signal frame: handler, trampoline (its first byte), the interrupted "
		      "pc as it is, then return addresses into their calls, to the outermost frame "
		      "(%u frames, %s)", n, unwind_end_name(end));
		n = unwind_stack(&u, cfi_at, NULL, &regs, stack, sizeof(stack), ips, 3, &end);
		CHECK(same(ips, n, want, 3) && end == UNWIND_DEPTH, "cut at 3 frames: the depth limit (%s)",
		      unwind_end_name(end));
		n = unwind_stack(&u, cfi_at, NULL, &regs, stack, L + 16 - S, ips, 16, &end);
		CHECK(same(ips, n, want, 4) && end == UNWIND_NO_STACK,
		      "the last return address not copied: beyond the copied stack (%u frames, %s)", n,
		      unwind_end_name(end));
	}
	{
		/* Sampled in rt_sigreturn: the pc is past the syscall, where the trampoline's CFI ends. */
		struct unwind_regs regs = { tramp + tramp_size, T, 0xdead, true };
		uint64_t want[] = { tramp + tramp_size, leaf, framed_ret - 1, outer_ret - 1 };

		n = unwind_stack(&u, cfi_at, NULL, &regs, stack + 8, sizeof(stack) - 8, ips, 16, &end);
		CHECK(same(ips, n, want, 4) && end == UNWIND_COMPLETE,
		      "in rt_sigreturn: the trampoline from its syscall instruction (%u frames, %s)", n,
		      unwind_end_name(end));
		regs.in_syscall = false;
		n = unwind_stack(&u, cfi_at, NULL, &regs, stack + 8, sizeof(stack) - 8, ips, 16, &end);
		CHECK(n == 1 && end == UNWIND_NO_CFI,
		      "the same pc sampled in user mode has no CFI (%u frames, %s)", n, unwind_end_name(end));
	}
	unwinder_release(&u);
out:
	if (fixture_cfi)
		dwarf_cfi_end(fixture_cfi);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}
