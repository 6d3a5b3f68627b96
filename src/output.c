// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/output.h"
#include "bpfprof/util.h"

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
