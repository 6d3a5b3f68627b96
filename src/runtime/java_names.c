// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* Names of a HotSpot JVM's code, read from its memory (java_names.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/java_names.h"

#define MAX_HEADER 1024			/* bytes of a class read at once: all are smaller */
#define MAX_DEBUG_INFO (1u << 20)	/* an nmethod's metadata, scopes or pcs, in bytes */
#define LINE_CHUNK 64			/* a line table is read by so many bytes */

/* A field's value in a copy of its object (width 1, 2, 4 or 8, little-endian). */
static uint64_t get(const uint8_t *obj, struct java_field f)
{
	uint64_t v = 0;

	memcpy(&v, obj + f.off, f.size <= 8 ? f.size : 8);
	return v;
}

/* The field f of the object at addr, read alone. */
static int read_field(interp_read_fn *read, void *ctx, uint64_t addr, struct java_field f,
		      uint64_t *out)
{
	uint8_t buf[8];
	int ret;

	if (!f.size || f.size > 8)
		return -EINVAL;
	if ((ret = read(ctx, addr + f.off, buf, f.size)))
		return ret;
	*out = 0;
	memcpy(out, buf, f.size);
	return 0;
}

/* The first size bytes of the object at addr, into buf (MAX_HEADER). */
static int read_header(interp_read_fn *read, void *ctx, uint64_t addr, size_t size, uint8_t *buf)
{
	if (!addr)
		return -EINVAL;
	if (!size || size > MAX_HEADER)
		return -EINVAL;
	return read(ctx, addr, buf, size);
}

static bool field_in(struct java_field f, size_t size)
{
	return f.size && f.off + f.size <= size;
}

/*
 * s made printable UTF-8 in place: a control character, or a byte of no
 * valid sequence (modified UTF-8's surrogate pairs for characters beyond
 * the BMP), becomes '?'. A name goes into folded lines and pprof's
 * strings, which must be UTF-8 and one line.
 */
static void clean_utf8(char *s)
{
	uint8_t *p = (uint8_t *)s;
	size_t len, k;

	while (*p) {
		len = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : 0;
		for (k = 1; k < len; k++)
			if ((p[k] & 0xc0) != 0x80)
				len = 0;
		/* Overlong forms (modified UTF-8's NUL, C0 80) and surrogates (ED A0..BF) are not UTF-8. */
		if ((len == 2 && *p < 0xc2) || (len == 3 && *p == 0xe0 && p[1] < 0xa0) ||
		    (len == 3 && *p == 0xed && p[1] >= 0xa0))
			len = 0;
		if (!len || *p < 0x20 || *p == 0x7f) {
			*p++ = '?';
			continue;
		}
		p += len;
	}
}

int java_symbol_read(const struct java_vm *vm, interp_read_fn *read, void *ctx, uint64_t symbol,
		     char *buf, size_t size)
{
	const struct java_offsets *o = &vm->o;
	uint64_t len;
	size_t n;
	int ret;

	if (!size)
		return -EINVAL;
	buf[0] = '\0';
	if (!symbol || !o->symbol_body.size)
		return -EINVAL;
	if ((ret = read_field(read, ctx, symbol, o->symbol_length, &len)))
		return ret;
	n = len < size - 1 ? len : size - 1;
	if (n > JAVA_NAME_MAX - 1)
		n = JAVA_NAME_MAX - 1;
	if (n && (ret = read(ctx, symbol + o->symbol_body.off, buf, n)))
		return ret;
	buf[n] = '\0';
	/* A Symbol holds no NUL (modified UTF-8 writes it as two bytes). */
	if (strlen(buf) != n)
		return -EINVAL;
	clean_utf8(buf);
	return (int)n;
}

/* The Symbol in slot index of the constant pool at cp (its slots follow the ConstantPool). */
static int pool_symbol(const struct java_vm *vm, interp_read_fn *read, void *ctx, uint64_t cp,
		       uint64_t index, char *buf, size_t size)
{
	uint64_t sym;
	int ret;

	buf[0] = '\0';
	if (!index)
		return -ENOENT;
	if ((ret = read(ctx, cp + vm->o.cp_size + 8 * index, &sym, sizeof(sym))))
		return ret;
	/* The low bit tags a slot on some versions: a Symbol* is aligned. */
	return java_symbol_read(vm, read, ctx, sym & ~1ull, buf, size);
}

/*
 * A class's name as Java shows it (Klass::external_name): slashes as dots,
 * and a hidden class's last '+' (its name + its address) as the '/' of
 * "Foo$$Lambda/0x0000000801001200".
 */
static void external_class_name(char *name)
{
	char *plus = strrchr(name, '+'), *c;

	for (c = name; *c; c++)
		if (*c == '/')
			*c = '.';
	if (plus && !strncmp(plus + 1, "0x", 2))
		*plus = '/';
}

/*
 * HotSpot's CompressedReadStream (to JDK 19) and UNSIGNED5 (JDK 20+, which
 * leaves out the bytes below excluded): a u32 in 1..5 bytes of 6 bits,
 * the last below 192, or the 5th. pos moves past it.
 */
static int read_u5(const uint8_t *p, size_t len, size_t *pos, uint8_t excluded, uint32_t *out)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 5; i++) {
		uint8_t b;

		if (*pos >= len)
			return -EINVAL;
		b = p[(*pos)++];
		if (b < excluded)
			return -EINVAL;
		sum += (uint32_t)(b - excluded) << (6 * i);
		if (b < 192)
			break;
	}
	*out = sum;
	return 0;
}

static int read_signed_u5(const uint8_t *p, size_t len, size_t *pos, uint8_t excluded,
			  int32_t *out)
{
	uint32_t v;
	int ret = read_u5(p, len, pos, excluded, &v);

	*out = (int32_t)(v >> 1) ^ -(int32_t)(v & 1);
	return ret;
}

/*
 * One pair of CompressedLineNumberReadStream: a byte (bci delta << 3 |
 * line delta), or 0xff then both signed; 0 ends the table. 1: a pair;
 * 0: the end; a negative errno: bytes run out.
 */
static int line_pair(const uint8_t *p, size_t len, size_t *pos, uint8_t excluded, uint32_t *bci,
		     uint32_t *line)
{
	int32_t dbci, dline;
	uint8_t b;
	int ret;

	if (*pos >= len)
		return -EINVAL;
	b = p[(*pos)++];
	if (!b)
		return 0;
	if (b != 0xff) {
		*bci += b >> 3;
		*line += b & 7;
		return 1;
	}
	if ((ret = read_signed_u5(p, len, pos, excluded, &dbci)) ||
	    (ret = read_signed_u5(p, len, pos, excluded, &dline)))
		return ret;
	*bci += (uint32_t)dbci;
	*line += (uint32_t)dline;
	return 1;
}

uint32_t java_method_line(const struct java_vm *vm, const struct java_method *m, uint32_t bci)
{
	uint32_t at = 0, line = 0, best_bci = 0, best_line = 0;
	size_t pos = 0;

	if (m->native || !m->lines_len || bci >= m->code_size)
		return 0;
	while (line_pair(m->lines, m->lines_len, &pos, vm->o.unsigned5_excluded, &at, &line) == 1) {
		if (at == bci)
			return line;
		if (at < bci && at >= best_bci) {
			best_bci = at;
			best_line = line;
		}
	}
	return best_line;
}

/*
 * The line number table at addr, read LINE_CHUNK bytes at a time up to its
 * end (a 0 where a pair begins), into m->lines.
 */
static void read_lines(const struct java_vm *vm, interp_read_fn *read, void *ctx, uint64_t addr,
		       struct java_method *m)
{
	uint32_t bci = 0, line = 0;
	size_t have = 0, pos = 0;
	int ret;

	for (;;) {
		/* Decode what is read; a pair cut at the chunk's end is decoded again once whole. */
		size_t start = pos;

		ret = line_pair(m->lines, have, &pos, vm->o.unsigned5_excluded, &bci, &line);
		if (ret == 1)
			continue;
		if (ret == 0) {
			m->lines_len = pos;
			return;
		}
		pos = start;
		if (have + LINE_CHUNK > sizeof(m->lines)) {
			/* Cut: keep the whole pairs, and a terminator that ends them. */
			m->lines_cut = true;
			if (pos < sizeof(m->lines)) {
				m->lines[pos] = 0;
				m->lines_len = pos + 1;
			}
			return;
		}
		if (read(ctx, addr + have, m->lines + have, LINE_CHUNK))
			return;
		have += LINE_CHUNK;
	}
}

int java_method_read(const struct java_vm *vm, interp_read_fn *read, void *ctx, uint64_t method,
		     struct java_method *m)
{
	const struct java_offsets *o = &vm->o;
	uint8_t cm[MAX_HEADER], cp[MAX_HEADER];
	uint64_t const_method, access, cpool, holder, klass_name, file_index;
	int ret;

	memset(m, 0, sizeof(*m));
	if (!o->known || !field_in(o->cm_constants, o->cm_size) ||
	    !field_in(o->cm_flags, o->cm_size) || !field_in(o->cm_code_size, o->cm_size) ||
	    !field_in(o->cm_name_index, o->cm_size) || !field_in(o->cm_signature_index, o->cm_size) ||
	    !field_in(o->cp_holder, o->cp_size))
		return -EINVAL;
	if (!method)
		return -EINVAL;
	if ((ret = read_field(read, ctx, method, o->method_const_method, &const_method)) ||
	    (ret = read_field(read, ctx, method, o->method_access_flags, &access)) ||
	    (ret = read_header(read, ctx, const_method, o->cm_size, cm)))
		return ret;
	cpool = get(cm, o->cm_constants);
	if ((ret = read_header(read, ctx, cpool, o->cp_size, cp)))
		return ret;
	holder = get(cp, o->cp_holder);
	if (!holder)
		return -EINVAL;
	if ((ret = read_field(read, ctx, holder, o->klass_name, &klass_name)))
		return ret;
	if ((ret = java_symbol_read(vm, read, ctx, klass_name, m->klass, sizeof(m->klass))) < 0 ||
	    (ret = pool_symbol(vm, read, ctx, cpool, get(cm, o->cm_name_index), m->name,
			       sizeof(m->name))) < 0 ||
	    (ret = pool_symbol(vm, read, ctx, cpool, get(cm, o->cm_signature_index), m->signature,
			       sizeof(m->signature))) < 0)
		return ret == -ENOENT ? -EINVAL : ret;
	external_class_name(m->klass);
	/* The source file: optional (lambdas' and generated classes' have none). */
	if (field_in(o->cp_source_file_index, o->cp_size))
		file_index = get(cp, o->cp_source_file_index);
	else if (read_field(read, ctx, holder, o->ik_source_file_index, &file_index))
		file_index = 0;
	if (file_index && pool_symbol(vm, read, ctx, cpool, file_index, m->file, sizeof(m->file)) < 0)
		m->file[0] = '\0';
	m->const_method = const_method;
	m->native = access & o->acc_native;
	m->code_size = get(cm, o->cm_code_size);
	/* The line table follows the bytecodes, which follow the ConstMethod. */
	if (!m->native && (get(cm, o->cm_flags) & o->cm_has_linenumber_table))
		read_lines(vm, read, ctx, const_method + o->cm_size + m->code_size, m);
	return 0;
}

int java_blob_name(const struct java_vm *vm, interp_read_fn *read, void *ctx, uint64_t blob,
		   char *buf, size_t size)
{
	uint64_t name;
	size_t i;
	int ret;

	if (!size)
		return -EINVAL;
	buf[0] = '\0';
	if (!blob)
		return -EINVAL;
	if ((ret = read_field(read, ctx, blob, vm->o.blob_name, &name)))
		return ret;
	if (!name)
		return -EINVAL;
	if (size > JAVA_NAME_MAX)
		size = JAVA_NAME_MAX;
	/* Byte by byte would be slow; by chunks up to a NUL (a chunk may end at a page's end). */
	for (i = 0; i < size - 1;) {
		size_t n = size - 1 - i < 32 ? size - 1 - i : 32;

		if (read(ctx, name + i, buf + i, n)) {
			if (n == 1 || read(ctx, name + i, buf + i, 1))
				return -EINVAL;
			n = 1;
		}
		if (memchr(buf + i, '\0', n)) {
			clean_utf8(buf);
			return 0;
		}
		i += n;
	}
	buf[size - 1] = '\0';
	clean_utf8(buf);
	return 0;
}

/* Where an nmethod's debug information lies, and its method. */
struct nm_info {
	uint64_t method;
	uint64_t metadata, metadata_size;
	uint64_t pcs, pcs_size;
	uint64_t scopes, scopes_size;
};

/* data.go's getJITInfo, in each of java_nmethod_layout's layouts. */
static int nm_regions(const struct java_vm *vm, const uint8_t *nm, uint64_t addr,
		      struct nm_info *i)
{
	const struct java_offsets *o = &vm->o;
	uint64_t imm, imm_size, pcs_off, scopes_off;

	if (o->nmethod_layout == JAVA_NMETHOD_IN_BLOB) {
		uint64_t metadata = (uint32_t)get(nm, o->nm_metadata_offset);
		uint64_t scopes = get(nm, o->nm_scopes_data) - addr;
		uint64_t pcs = (uint32_t)get(nm, o->nm_scopes_pcs_offset);
		uint64_t deps = (uint32_t)get(nm, o->nm_dependencies_offset);

		if (metadata > scopes || scopes > pcs || pcs > deps || deps > MAX_DEBUG_INFO * 4)
			return -EINVAL;
		i->metadata = addr + metadata, i->metadata_size = scopes - metadata;
		i->scopes = addr + scopes, i->scopes_size = pcs - scopes;
		i->pcs = addr + pcs, i->pcs_size = deps - pcs;
		return 0;
	}
	if (o->nmethod_layout == JAVA_NMETHOD_MUTABLE) {
		uint64_t reloc = (uint32_t)get(nm, o->blob_relocation_size);
		uint64_t size = (uint32_t)get(nm, o->blob_mutable_data_size);

		if (reloc > size)
			return -EINVAL;
		i->metadata = get(nm, o->blob_mutable_data) + reloc;
		i->metadata_size = size - reloc;
	} else {
		uint64_t off = (uint32_t)get(nm, o->blob_code_end) + get(nm, o->nm_metadata_offset);
		uint64_t size = (uint32_t)get(nm, o->blob_size);

		if (off > size)
			return -EINVAL;
		i->metadata = addr + off;
		i->metadata_size = size - off;
	}
	imm = get(nm, o->nm_immutable_data);
	imm_size = (uint32_t)get(nm, o->nm_immutable_data_size);
	if (o->nm_immutable_ref_count.size &&
	    (uint32_t)get(nm, o->nm_immutable_ref_count) < imm_size)
		imm_size = (uint32_t)get(nm, o->nm_immutable_ref_count);
	pcs_off = (uint32_t)get(nm, o->nm_scopes_pcs_offset);
	scopes_off = (uint32_t)get(nm, o->nm_scopes_data);
	/* JDK 23+: the pcs first, then the scopes, to the block's end. */
	if (pcs_off > scopes_off || scopes_off > imm_size)
		return -EINVAL;
	i->pcs = imm + pcs_off, i->pcs_size = scopes_off - pcs_off;
	i->scopes = imm + scopes_off, i->scopes_size = imm_size - scopes_off;
	return 0;
}

/*
 * The PcDesc for pc_offset: the one at it, else the nearest after it
 * (HotSpot's pc_desc_near). Its scope's offset in the scopes data; 0: none.
 */
static int find_pc_desc(const struct java_vm *vm, const uint8_t *pcs, size_t size,
			uint32_t pc_offset, uint32_t *scope)
{
	const struct java_offsets *o = &vm->o;
	size_t stride = o->pc_desc_size, n, k;
	int64_t best = INT64_MAX;

	if (!field_in(o->pc_offset, stride) || !field_in(o->pc_scope_decode_offset, stride))
		return -EINVAL;
	n = size / stride;
	if (n > JAVA_MAX_PC_DESCS)
		n = JAVA_MAX_PC_DESCS;
	*scope = 0;
	for (k = 0; k < n; k++) {
		const uint8_t *d = pcs + k * stride;
		int32_t at = (int32_t)get(d, o->pc_offset);

		if (at == (int32_t)pc_offset) {
			*scope = (uint32_t)get(d, o->pc_scope_decode_offset);
			return 0;
		}
		if (at > (int32_t)pc_offset && at < best) {
			best = at;
			*scope = (uint32_t)get(d, o->pc_scope_decode_offset);
		}
	}
	return 0;
}

/* A copy of size bytes at addr (the caller frees it), or NULL. */
static uint8_t *read_copy(interp_read_fn *read, void *ctx, uint64_t addr, uint64_t size, int *ret)
{
	uint8_t *buf;

	*ret = -EINVAL;
	if (!size || size > MAX_DEBUG_INFO || !addr)
		return NULL;
	buf = malloc(size);
	if (!buf) {
		*ret = -ENOMEM;
		return NULL;
	}
	if ((*ret = read(ctx, addr, buf, size))) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * The scope chain from scope (ScopeDesc::decode_body: the sender's
 * offset, the method's index in the metadata (1-based), bci + 1), each
 * scope's sender at a lower offset.
 */
static int decode_scopes(const struct java_vm *vm, const uint8_t *scopes, size_t scopes_size,
			 const uint8_t *metadata, size_t metadata_size, uint32_t scope,
			 struct java_scope *out, size_t max)
{
	uint8_t x = vm->o.unsigned5_excluded;
	size_t n = 0, limit = scopes_size;

	while (scope && n < max && n < JAVA_MAX_SCOPES) {
		uint32_t sender, index, bci;
		size_t pos = scope;
		uint64_t method;

		if (scope >= limit)
			return -EINVAL;
		limit = scope;
		if (read_u5(scopes, scopes_size, &pos, x, &sender) ||
		    read_u5(scopes, scopes_size, &pos, x, &index) ||
		    read_u5(scopes, scopes_size, &pos, x, &bci))
			return -EINVAL;
		if (!index || (uint64_t)index * 8 > metadata_size)
			return -EINVAL;
		memcpy(&method, metadata + 8 * (index - 1), 8);
		/* bci + 1: InvocationEntryBci (-1), the method's entry, as 0. */
		out[n++] = (struct java_scope){ method, bci ? bci - 1 : JAVA_BCI_NONE };
		scope = sender;
	}
	return n;
}

int java_compiled_scopes(const struct java_vm *vm, interp_read_fn *read, void *ctx,
			 uint64_t nmethod, uint32_t pc_offset, uint32_t compile_id,
			 struct java_scope *scopes, size_t max)
{
	const struct java_offsets *o = &vm->o;
	uint8_t nm[MAX_HEADER], *pcs = NULL, *data = NULL, *metadata = NULL;
	struct nm_info info = { 0 };
	uint64_t access;
	uint32_t scope;
	int ret;

	if (!o->known || !max || !field_in(o->nm_compile_id, o->nmethod_size) ||
	    !field_in(o->nm_method, o->nmethod_size))
		return -EINVAL;
	if ((ret = read_header(read, ctx, nmethod, o->nmethod_size, nm)))
		return ret;
	if ((uint32_t)get(nm, o->nm_compile_id) != compile_id)
		return -ESTALE;
	info.method = get(nm, o->nm_method);
	if (!info.method)
		return -EINVAL;
	scopes[0] = (struct java_scope){ info.method, JAVA_BCI_NONE };
	/* A native method's wrapper records no scopes. */
	if ((ret = read_field(read, ctx, info.method, o->method_access_flags, &access)))
		return ret;
	if (access & o->acc_native)
		return 1;
	if ((ret = nm_regions(vm, nm, nmethod, &info)))
		return ret;
	if (!(pcs = read_copy(read, ctx, info.pcs, info.pcs_size, &ret)))
		goto out;
	if ((ret = find_pc_desc(vm, pcs, info.pcs_size, pc_offset, &scope)))
		goto out;
	if (!scope) {
		ret = 1;
		goto out;
	}
	if (!(data = read_copy(read, ctx, info.scopes, info.scopes_size, &ret)) ||
	    !(metadata = read_copy(read, ctx, info.metadata, info.metadata_size, &ret)))
		goto out;
	ret = decode_scopes(vm, data, info.scopes_size, metadata, info.metadata_size, scope,
			    scopes, max);
	if (ret == 0) {
		scopes[0] = (struct java_scope){ info.method, JAVA_BCI_NONE };
		ret = 1;
	}
out:
	free(pcs);
	free(data);
	free(metadata);
	return ret;
}
