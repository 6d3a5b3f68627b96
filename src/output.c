// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/output.h"
#include "bpfprof/util.h"

static const struct {
	const char *name;
	writer_fn *write;
	bool binary;
} formats[FORMAT_COUNT] = {
	[FORMAT_FOLDED] = { "folded", write_folded, false },
	[FORMAT_PPROF] = { "pprof", write_pprof, true },
	[FORMAT_CALLGRIND] = { "callgrind", write_callgrind, false },
	[FORMAT_SVG] = { "svg", write_svg, false },
};

const char *format_name(enum output_format f)
{
	return formats[f].name;
}

int format_parse(const char *name)
{
	int f;

	for (f = 0; f < FORMAT_COUNT; f++)
		if (!strcmp(name, formats[f].name))
			return f;
	return -1;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int format_of_path(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (ends_with(base, ".pb.gz") || ends_with(base, ".pprof"))
		return FORMAT_PPROF;
	if (ends_with(base, ".svg"))
		return FORMAT_SVG;
	if (!strncmp(base, "callgrind.out", 13))
		return FORMAT_CALLGRIND;
	if (ends_with(base, ".folded") || ends_with(base, ".collapsed"))
		return FORMAT_FOLDED;
	return -1;
}

writer_fn *format_writer(enum output_format f)
{
	return formats[f].write;
}

bool format_is_binary(enum output_format f)
{
	return formats[f].binary;
}

int output_open(struct output_file *o, const char *path)
{
	struct strbuf tmp;
	const char *slash;
	struct stat st;
	mode_t mask;
	int fd, err;

	memset(o, 0, sizeof(*o));
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return error("cannot write to '%s': it is a directory; give a file name", path), -EISDIR;
	slash = strrchr(path, '/');
	strbuf_init(&tmp);
	if (slash)
		strbuf_add(&tmp, path, slash - path + 1);
	strbuf_addf(&tmp, ".%s.XXXXXX", slash ? slash + 1 : path);
	fd = mkostemp(tmp.buf, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT)
			error("cannot write to '%s': its directory does not exist; create it first", path);
		else
			error("cannot write to '%s': %s; choose a writable path", path, strerror(-err));
		strbuf_release(&tmp);
		return err;
	}
	/* mkostemp makes 0600; an output file is for others to read too. */
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		err = -errno;
		close(fd);
		unlink(tmp.buf);
		strbuf_release(&tmp);
		return err;
	}
	o->path = xstrdup(path);
	o->tmp_path = strbuf_detach(&tmp);
	return 0;
}

int output_commit(struct output_file *o)
{
	int err = 0;

	if (!o->path) {
		if (fflush(o->f) || ferror(o->f))
			err = -(errno ? errno : EIO);
		return err;
	}
	if (fflush(o->f) || ferror(o->f) || fsync(fileno(o->f)))
		err = -(errno ? errno : EIO);
	if (fclose(o->f) && !err)
		err = -(errno ? errno : EIO);
	o->f = NULL;
	if (!err && rename(o->tmp_path, o->path))
		err = -errno;
	if (err)
		unlink(o->tmp_path);
	free(o->tmp_path);
	free(o->path);
	o->tmp_path = o->path = NULL;
	return err;
}

void output_abort(struct output_file *o)
{
	if (o->path) {
		if (o->f)
			fclose(o->f);
		unlink(o->tmp_path);
		free(o->tmp_path);
		free(o->path);
	}
	memset(o, 0, sizeof(*o));
}
