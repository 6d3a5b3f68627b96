// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
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
	[FORMAT_OTLP] = { "otlp", write_otlp, true },
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
	if (ends_with(base, ".otlp.pb"))
		return FORMAT_OTLP;
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

int write_profile(FILE *out, const struct profile *p, enum output_format f,
		  const struct write_options *o)
{
	return formats[f].write(out, p, o);
}

bool format_is_binary(enum output_format f)
{
	return formats[f].binary;
}

/*
 * Temporary files not yet in place, newest first, for a signal handler to
 * remove: a node leaves the list (one pointer store) before it is freed,
 * and the handler runs on this, the only, thread.
 */
static struct output_file *volatile pending;

static void pending_remove(struct output_file *o)
{
	struct output_file *volatile *pp;

	for (pp = &pending; *pp; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void output_remove_temps(void)
{
	struct output_file *o;

	for (o = pending; o; o = o->next)
		unlink(o->tmp_path);
}

/*
 * A new file beside the target, never through a symlink (O_EXCL|O_NOFOLLOW):
 * whoever can write the directory could have planted one at any name we
 * chose. The rename then replaces whatever sits at the target, a symlink
 * included, and follows nothing.
 */
static int open_temp(struct strbuf *tmp, const char *path, const char *base)
{
	uint32_t r;
	int i, fd;

	for (i = 0; i < 100; i++) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = now_ns() ^ getpid() ^ i;
		strbuf_reset(tmp);
		strbuf_add(tmp, path, base - path);
		strbuf_addf(tmp, ".%s.%08x", base, r);
		fd = open(tmp->buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd < 0 ? -errno : fd;
	}
	return -EEXIST;
}

/* Under sudo the file belongs to whoever ran sudo, not to root. */
static void give_to_sudo_user(int fd, const char *path)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	unsigned long uid, gid;
	char *end;

	if (geteuid() != 0 || !u || !g)
		return;
	errno = 0;
	uid = strtoul(u, &end, 10);
	if (errno || !*u || *end || uid >= (uid_t)-1)
		return;
	gid = strtoul(g, &end, 10);
	if (errno || !*g || *end || gid >= (gid_t)-1)
		return;
	if (fchown(fd, uid, gid))
		warning("cannot give '%s' to SUDO_UID %lu and SUDO_GID %lu: %s; it stays root's", path,
			uid, gid, strerror(errno));
}

/* Made by root or by us: nobody else can have planted it. */
static bool trusted(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

/* A device, FIFO or socket: written where it is (-o /dev/null), never renamed over. */
static bool special(const struct stat *st)
{
	return S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode) || S_ISSOCK(st->st_mode);
}

static int open_in_place(struct output_file *o, const char *path)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		return error("cannot write to '%s': %s; choose a writable path", path,
			     strerror(-err)), err;
	}
	o->in_place = true;
	return 0;
}

int output_open(struct output_file *o, const char *path)
{
	bool here, followed = false;
	char *real = NULL;
	struct strbuf tmp;
	const char *base;
	struct stat st;
	int fd, err = 0;

	memset(o, 0, sizeof(*o));
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	/*
	 * A symlink root or we made is followed: -o /dev/stdout, a link to
	 * where profiles go. Any other is replaced by the rename, never
	 * followed: whoever can write a directory can plant one at any name.
	 */
	here = !lstat(path, &st);
	if (here && S_ISLNK(st.st_mode) && trusted(&st)) {
		followed = true;
		here = !stat(path, &st);
		if (here && S_ISREG(st.st_mode) && (real = realpath(path, NULL)))
			path = real;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!*base || (here && S_ISDIR(st.st_mode)))
		err = (error("cannot write to '%s': it is a directory; give a file name", path), -EISDIR);
	else if (here && S_ISBLK(st.st_mode))
		err = (error("cannot write to '%s': it is a block device; give a file name", path),
		       -EINVAL);
	else if (here && special(&st) && (followed || trusted(&st)))
		err = open_in_place(o, path);
	if (err || o->in_place) {
		free(real);
		return err;
	}
	strbuf_init(&tmp);
	fd = open_temp(&tmp, path, base);
	if (fd < 0) {
		err = fd;
		if (err == -ENOENT)
			error("cannot write to '%s': its directory does not exist; create it first", path);
		else if (err == -ENOTDIR)
			error("cannot write to '%s': a part of its directory is not a directory; give "
			      "another path", path);
		else
			error("cannot write to '%s': %s; choose a writable path", path, strerror(-err));
		strbuf_release(&tmp);
		free(real);
		return err;
	}
	/* For others to read, whatever the umask. */
	fchmod(fd, 0644);
	give_to_sudo_user(fd, path);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		err = -errno;
		close(fd);
		unlink(tmp.buf);
		strbuf_release(&tmp);
		free(real);
		return err;
	}
	o->path = xstrdup(path);
	o->tmp_path = strbuf_detach(&tmp);
	free(real);
	o->next = pending;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pending = o;
	return 0;
}

int output_commit(struct output_file *o)
{
	int err = 0;

	if (!o->path) {
		if (fflush(o->f) || ferror(o->f))
			err = -(errno ? errno : EIO);
		if (o->in_place && fclose(o->f) && !err)
			err = -(errno ? errno : EIO);
		o->f = NULL;
		return err;
	}
	/*
	 * No fsync: the rename shows the file whole or not at all to every
	 * reader; waiting for the disk (50-100 ms on this VM, most of the end
	 * latency) would matter only to a machine that crashes right after.
	 */
	if (fflush(o->f) || ferror(o->f))
		err = -(errno ? errno : EIO);
	if (fclose(o->f) && !err)
		err = -(errno ? errno : EIO);
	o->f = NULL;
	if (!err && rename(o->tmp_path, o->path))
		err = -errno;
	if (err)
		unlink(o->tmp_path);
	pending_remove(o);
	free(o->tmp_path);
	free(o->path);
	o->tmp_path = o->path = NULL;
	return err;
}

void output_abort(struct output_file *o)
{
	if (o->in_place && o->f)
		fclose(o->f);
	if (o->path) {
		if (o->f)
			fclose(o->f);
		unlink(o->tmp_path);
		pending_remove(o);
		free(o->tmp_path);
		free(o->path);
	}
	memset(o, 0, sizeof(*o));
}

int output_write(struct output_file *o, const char *name, const struct profile *p,
		 enum output_format f, const struct write_options *wo)
{
	/* A file renamed into place only when whole is as it was; a device or pipe is not. */
	bool renamed = name && !o->in_place;
	int err = write_profile(o->f, p, f, wo);

	if (!err)
		err = output_commit(o);
	if (!err)
		return 0;
	error("cannot write %s output to %s%s%s: %s; %s", format_name(f), name ? "'" : "stdout",
	      name ? name : "", !name ? "" : renamed ? "' (left as it was)" : "'", strerror(-err),
	      err == -ENOSPC || err == -EDQUOT ? "free some space, or give -o a file on another file system"
	      : err == -EPIPE			? "its reader exited first: let it read to the end"
						: "check the device, or give -o another path");
	output_abort(o);
	return err;
}
