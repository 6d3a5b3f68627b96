// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The symbolizer's core: processes followed, addresses normalized to a
 * mapping and file offset, and named from the file (symfile.c), the JIT
 * map (jit.c) or the kernel's symbols.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include "bpfprof/sample.h"
#include "symbolize_private.h"

void symbolizer_init(struct symbolizer *s)
{
	memset(s, 0, sizeof(*s));
	procs_init(&s->procs);
	kernel_symbols_init(&s->kernel, "/proc/kallsyms");
	s->vdso.path = xstrdup("[vdso]");
	s->vdso.fd = -1;
	s->vdso.cfi_fd = -1;
	s->vdso.debug_cfi_fd = -1;
	unwinder_init(&s->unwinder);
	s->vdso.err = load_vdso(&s->vdso);
}

void symbolizer_release(struct symbolizer *s)
{
	procs_release(&s->procs);
	kernel_symbols_release(&s->kernel);
	symfiles_release(s);
	unwinder_release(&s->unwinder);
	jit_names_release(&s->jit);
	memset(s, 0, sizeof(*s));
}

void symbolizer_new_generation(struct symbolizer *s)
{
	s->procs.generation++;
	kernel_symbols_check_modules(&s->kernel);
}

void symbolizer_scan(struct symbolizer *s, uint32_t (*current_gen)(void *ctx, uint32_t tgid),
		     void *ctx)
{
	uint32_t i;

	procs_scan(&s->procs, current_gen, ctx);
	/* Their files too, now: a process may be gone by the drain that needs them. */
	for (i = 0; i < s->procs.nr; i++)
		open_files_of(s, s->procs.procs[i]);
}

uint32_t symbolizer_forget_before(struct symbolizer *s, uint64_t ns)
{
	uint32_t i, pruned = procs_prune(&s->procs, ns);

	forget_jitmaps(&s->jit, &s->procs);

	/* Once a drain: debug info no lookup needed since the last one is let go. */
	for (i = 0; i < s->nr_files; i++)
		dwarf_index_trim(s->files[i]->dwarf);
	release_unmapped_files(s);
	return pruned;
}

void symbolizer_name_late_jit(struct symbolizer *s, struct profile *p)
{
	jit_name_late(&s->jit, &s->procs, p);
}

/* Forgotten, and not alive either (a kernel thread is never known: it maps nothing). */
bool symbolizer_process_gone(void *ctx, uint32_t pid)
{
	struct symbolizer *s = ctx;
	char path[4096];

	if (procs_find(&s->procs, pid))
		return false;
	snprintf(path, sizeof(path), "%s/%" PRIu32, s->procs.proc_root, pid);
	return access(path, F_OK) != 0;
}

static void renumber(void *ctx, const struct profile_renumbering *r)
{
	struct symbolizer *s = ctx;
	uint32_t i;
	size_t j, k;

	for (i = 0; i < s->procs.nr; i++) {
		struct proc *proc = s->procs.procs[i];

		for (j = 0; j < proc->nr_images; j++)
			for (k = 0; k < proc->images[j].nr_maps; k++) {
				struct proc_map *m = &proc->images[j].maps[k];
				uint32_t to = m->prof_mapping ? r->mappings[m->prof_mapping - 1] : ITAB_NONE;

				m->prof_mapping = to == ITAB_NONE ? 0 : to + 1;
			}
	}
	kernel_symbols_renumber(&s->kernel, r);
	jit_renumber(&s->jit, r);
}

void symbolizer_on_fold(struct symbolizer *s, struct profile *p)
{
	s->fold = (struct fold_listener){ .after = renumber, .ctx = s };
	profile_on_fold(p, &s->fold);
}

void symbolizer_off_fold(struct symbolizer *s, struct profile *p)
{
	profile_off_fold(p, &s->fold);
}


/*
 * Symbolize: the frames at a file offset, innermost first (an inline chain
 * when the file says so); 0 when nothing names it.
 */
static uint16_t file_frames(struct symbolizer *s, struct symfile *f, uint64_t offset,
			    struct sym_frame *out)
{
	const struct elf_symtab *t = f->debug_syms.from_symtab ? &f->debug_syms : &f->syms;
	struct dwarf_frame dw[MAX_INLINE_DEPTH];
	const struct elf_sym *sym;
	uint64_t vaddr;
	int n = 0, i;

	load_symfile(s, f);
	/* The file's own segments: a debug file's say nothing of file offsets. */
	if (f->err || elf_symtab_offset_to_vaddr(&f->syms, offset, &vaddr))
		return 0;
	sym = elf_symtab_lookup(t, vaddr);
	if (f->dwarf)
		n = dwarf_index_frames(f->dwarf, vaddr, dw, MAX_INLINE_DEPTH);
	/* The function as the symbol table spells it; DWARF's name if it has none. */
	if (n > 0 && sym)
		dw[n - 1].name = elf_sym_name(t, sym);
	if (n > 0 && dw[n - 1].name) {
		for (i = 0; i < n; i++)
			out[i] = (struct sym_frame){ dw[i].name ? dw[i].name : "??", dw[i].file,
						     dw[i].line };
		return n;
	}
	if (!sym)
		return 0;
	out[0] = (struct sym_frame){ elf_sym_name(t, sym), NULL, 0 };
	return 1;
}

void symbolizer_track(void *ctx, const struct sb_event *ev)
{
	struct symbolizer *s = ctx;
	struct proc *owner;
	struct proc_map *m = procs_apply(&s->procs, ev, &owner);

	/* kallsyms names BPF code "[bpf]"; other out-of-line code is the kernel's. */
	if (ev->type == SB_KSYMBOL && !ev->ksymbol.unregister)
		kernel_symbols_added(&s->kernel, ev->ksymbol.addr, ev->ksymbol.len, ev->ksymbol.name,
				     ev->ksymbol.type == PERF_RECORD_KSYMBOL_TYPE_BPF ? "bpf" : "");
	if (m && m->path[0] == '/')
		get_file(s, owner->tgid, m);
}

/* Locations -------------------------------------------------------------- */

static uint32_t named_location(struct profile *p, uint32_t mapping, uint64_t addr,
			       enum frame_kind kind, const char *name)
{
	struct sym_frame fr = { name, NULL, 0 };

	return frames_location(p, mapping, addr, kind, &fr, name ? 1 : 0);
}


static uint32_t build_id_string(struct profile *p, const struct proc_map *m)
{
	char hex[2 * sizeof(m->build_id) + 1];

	build_id_hex(m, hex);
	return profile_string(p, hex);
}

static uint32_t user_location(struct symbolizer *s, struct profile *p, struct proc *proc,
			      uint32_t gen, uint64_t addr)
{
	struct proc_map *m = proc_find_map(&s->procs, proc, gen, addr);
	struct sym_frame frames[MAX_INLINE_DEPTH];
	struct prof_mapping pm = { 0 };
	struct symfile *f = NULL;
	uint32_t mapping, id;
	uint16_t n = 0;

	if (!m) {
		id = profile_location_find(p, 0, addr);
		return id != ITAB_NONE ? id : named_location(p, 0, addr, FRAME_USER, NULL);
	}
	if (!strcmp(m->path, "[vdso]"))
		f = &s->vdso;
	else if (m->path[0] == '/')
		f = get_file(s, proc->tgid, m);
	if (f)
		load_symfile(s, f);
	/* Made once per mapping: hashing its path and build ID per frame was most of a drain. */
	if (!m->prof_mapping) {
		pm.start = m->start;
		pm.limit = m->end;
		pm.offset = m->offset;
		pm.file = profile_string(p, m->path[0] ? m->path : "[anon]");
		pm.build_id = f && !f->err && f->syms.build_id[0] ? profile_string(p, f->syms.build_id) : 0;
		if (!pm.build_id && m->build_id_size)	/* unreadable, but the kernel told us */
			pm.build_id = build_id_string(p, m);
		pm.pid = proc->tgid;
		m->prof_mapping = profile_mapping(p, &pm) + 1;
	}
	mapping = m->prof_mapping - 1;
	id = profile_location_find(p, mapping, addr);
	if (id != ITAB_NONE)
		return id;
	/* JIT code lives in anonymous memory: the process's perf map may name it. */
	if (!f && anon_map(m))
		return jit_location(&s->jit, &s->procs, p, proc->tgid, mapping, addr);
	if (f)
		n = file_frames(s, f, addr - m->start + m->offset, frames);
	return frames_location(p, mapping, addr, FRAME_USER, frames, n);
}

/* What the unwinder asks: the CFI covering pc in the process, and pc in the file's terms. */
struct cfi_query {
	struct symbolizer *s;
	struct proc *proc;
	uint32_t gen;
	/* The mapping of the last pc asked, and its file: a stack's frames come in runs of one file. */
	uint64_t start, end, offset;
	struct symfile *f;
};

static bool cfi_at(void *ctx, uint64_t pc, uint64_t *vaddr, Dwarf_CFI *cfi[2])
{
	struct cfi_query *q = ctx;

	if (!q->f || pc < q->start || pc >= q->end) {
		struct proc_map *m = proc_find_map(&q->s->procs, q->proc, q->gen, pc);
		struct symfile *f = NULL;

		if (!m)
			return false;
		if (!strcmp(m->path, "[vdso]"))
			f = &q->s->vdso;
		else if (m->path[0] == '/')
			f = get_file(q->s, q->proc->tgid, m);
		if (!f)
			return false;
		load_symfile(q->s, f);
		q->f = f;
		q->start = m->start;
		q->end = m->end;
		q->offset = m->offset;
	}
	if (elf_symtab_offset_to_vaddr(&q->f->syms, pc - q->start + q->offset, vaddr))
		return false;
	cfi[0] = q->f->cfi;
	cfi[1] = q->f->debug_cfi;
	return true;
}

uint32_t symbolize_unwound_stack(struct symbolizer *s, struct profile *p, uint32_t tgid,
				 uint32_t gen, const struct unwind_regs *regs, const uint8_t *stack,
				 uint32_t stack_bytes, uint32_t *locs, uint32_t max,
				 enum unwind_end *end)
{
	struct cfi_query q = { s, procs_get(&s->procs, tgid, gen), gen, 0, 0, 0, NULL };
	uint64_t ips[BPFPROF_MAX_DEPTH];
	uint32_t n, i;

	if (max > BPFPROF_MAX_DEPTH)
		max = BPFPROF_MAX_DEPTH;
	n = unwind_stack(&s->unwinder, cfi_at, &q, regs, stack, stack_bytes, ips, max, end);
	/*
	 * Named as the unwinder gives them: it knows which frames a signal
	 * interrupted (their pc is not a return address) and which called.
	 */
	for (i = 0; i < n; i++)
		locs[i] = user_location(s, p, q.proc, gen, ips[i]);
	return n;
}

void symbolize_user_stack(struct symbolizer *s, struct profile *p, uint32_t tgid, uint32_t gen,
			  const uint64_t *ips, uint32_t n, uint32_t *locs)
{
	struct proc *proc = procs_get(&s->procs, tgid, gen);
	uint32_t i;

	for (i = 0; i < n; i++)
		locs[i] = user_location(s, p, proc, gen, ips[i] - (i > 0));
}

void symbolize_kernel_stack(struct symbolizer *s, struct profile *p, const uint64_t *ips,
			    uint32_t n, uint32_t *locs)
{
	kernel_symbols_stack(&s->kernel, p, ips, n, locs);
}
