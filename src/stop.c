// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* What ends sampling: a signal, the targets gone, stdout's reader gone (the duration is the loop's). */
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/output.h"
#include "bpfprof/stop.h"
#include "bpfprof/util.h"

volatile sig_atomic_t stop_signal;
volatile uint64_t stop_ns;
static volatile sig_atomic_t writing;

static void say(const char *s)
{
	ssize_t unused __attribute__((unused)) = write(STDERR_FILENO, s, strlen(s));
}

/*
 * A signal once sampling is over asks to stop now, profile or not: the
 * files not yet in place are removed (those in place stay whole) and we
 * die of the signal, so the shell sees it. Async-signal-safe calls only.
 */
static void abandon_writing(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	output_remove_temps();
	say("bpfprof: ");
	say(sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP");
	say(" while writing the profile: outputs not yet complete were removed; let it finish "
	    "(no signal after sampling ends) to keep them\n");
	sigaction(sig, &dfl, NULL);
	raise(sig);	/* blocked in its handler: delivered as we return */
}

static void on_stop_signal(int sig)
{
	if (writing)
		abandon_writing(sig);
	/* clock_gettime is async-signal-safe; an aligned 64-bit store is whole on 64-bit CPUs. */
	if (!stop_signal)
		stop_ns = now_ns();
	stop_signal = sig;
}

void catch_stop_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	/* No SA_RESTART: a signal must cut the ring buffer poll short. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void stop_now(void)
{
	if (!stop_signal)
		stop_ns = now_ns();
}

void stop_writing_on_signal(int on)
{
	writing = on;
}

const char *stop_cause(void)
{
	return stop_signal ? "the stop signal" : "sampling ended";
}

/* The --cgroup directory was removed (or another took its name): nothing will run in it. */
static bool cgroup_gone(const char *path, int fd)
{
	struct stat a, b;

	return fstat(fd, &a) || stat(path, &b) || a.st_ino != b.st_ino || a.st_dev != b.st_dev;
}

/* With -p/-t or --cgroup, profiling ends once nothing is left to profile. */
bool targets_gone(const struct options *o, int cgroup_fd)
{
	size_t i;

	if (cgroup_fd >= 0 && cgroup_gone(o->cgroup_path, cgroup_fd))
		return true;
	if (!o->ntgids && !o->npids)
		return false;
	for (i = 0; i < o->ntgids; i++)
		if (task_alive(o->tgids[i]))
			return false;
	for (i = 0; i < o->npids; i++)
		if (task_alive(o->pids[i]))
			return false;
	return true;
}

/* stdout, one of the outputs, is a pipe nobody reads any more (bpfprof | head, head done). */
bool stdout_gone(const struct options *o)
{
	struct pollfd p = { .fd = STDOUT_FILENO };
	size_t i;

	for (i = 0; i < o->noutputs && o->outputs[i].path; i++)
		;
	return i < o->noutputs && poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}
