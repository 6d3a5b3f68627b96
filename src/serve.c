// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof/netlibs.h"
#include "bpfprof/output.h"
#include "bpfprof/serve.h"
#include "bpfprof/util.h"
#include "bpfprof/window.h"

/* A request for a profile: the server thread's until queued, then the session's until answered. */
struct request {
	struct MHD_Connection *conn;
	enum output_format format;	/* pprof (/debug/pprof/profile) or svg (/flamegraph) */
	double seconds;
	struct window_filter filter;	/* pid=, cgroup=, comm=, mode= (its strings the request's) */
	uint64_t end_ns;
	struct window window;
	unsigned status;		/* the answer: 200 and a pprof, or why not */
	char *body;
	size_t len;
	const char *type;
	struct request *next;
};

struct server {
	struct sink sink;
	struct MHD_Daemon *daemon;
	int listen_fd;
	struct profile *session;
	struct request *fresh;		/* taken from the queue, windows to open at the next drain */
	struct request *open;		/* windows the session's thread keeps open */
	pthread_mutex_t lock;		/* for what follows, shared by both threads */
	struct request *queued;		/* new requests, for the session's thread */
	unsigned profiles;		/* requests for profiles not yet done with */
	char *metrics;
	bool stopping;
};

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><title>bpfprof</title></head><body>\n"
	"<h1>bpfprof</h1>\n<ul>\n"
	"<li><a href=\"/debug/pprof/profile?seconds=30\">/debug/pprof/profile?seconds=N</a>: "
	"a gzipped pprof of the next N seconds (up to 3600; pid=PID, cgroup=PATH and comm=NAME "
	"keep one process's, one cgroup's or one thread name's samples; mode=cpu or mode=off-cpu "
	"one half of a --wall profile), for <code>go tool pprof http://HOST:PORT/debug/pprof/"
	"profile?seconds=30</code></li>\n"
	"<li><a href=\"/flamegraph?seconds=30\">/flamegraph?seconds=N</a>: the same N seconds "
	"as an interactive SVG flame graph (hover, click to zoom, search), with the same pid=, "
	"cgroup=, comm= and mode=</li>\n"
	"<li><a href=\"/metrics\">/metrics</a>: the profiler's counters, in Prometheus' text "
	"format</li>\n</ul>\n</body></html>\n";

/* Queues an answer: body is taken (freed by the server), or copied when static. */
static enum MHD_Result answer(struct MHD_Connection *conn, unsigned status, const char *type,
			      char *body, size_t len, bool owned)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, body,
					       owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (status == 200 && !strcmp(type, "application/octet-stream"))
		MHD_add_response_header(resp, "Content-Disposition", "attachment; filename=\"profile\"");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* One line saying what was wrong with the request, and what to do. */
static char *reason(size_t *len, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *reason(size_t *len, const char *fmt, ...)
{
	struct strbuf sb;
	va_list ap;

	strbuf_init(&sb);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	strbuf_addch(&sb, '\n');
	*len = sb.len;
	return strbuf_detach(&sb);
}

#define REFUSE(conn, status, ...)                                                              \
	({                                                                                     \
		size_t len_;                                                                   \
		char *why_ = reason(&len_, __VA_ARGS__);                                        \
		answer(conn, status, "text/plain; charset=utf-8", why_, len_, true);           \
	})

static enum MHD_Result answer_metrics(struct server *s, struct MHD_Connection *conn)
{
	char *text;

	pthread_mutex_lock(&s->lock);
	text = xstrdup(s->metrics ? s->metrics : "");
	pthread_mutex_unlock(&s->lock);
	return answer(conn, 200, "text/plain; version=0.0.4; charset=utf-8", text, strlen(text), true);
}

/* A number from a query argument, all of it; false if it is not one. */
static bool parse_number(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return *s && !*end && !errno && isfinite(*v);
}

/*
 * mode=: which half of a --wall profile. A half the profile does not hold
 * is refused, not answered empty (a graph of nothing would look like an
 * idle host). NULL, or why not.
 */
static const char *mode_refused(const char *mode, enum profile_kind kind, enum window_mode *out)
{
	if (!strcmp(mode, "cpu"))
		*out = WINDOW_CPU;
	else if (!strcmp(mode, "off-cpu"))
		*out = WINDOW_OFF_CPU;
	else
		return "give cpu or off-cpu";
	if (*out == WINDOW_CPU && kind == PROFILE_OFF_CPU)
		return "this bpfprof measures time off the CPU only (--off-cpu); start it with "
		       "--wall for both";
	if (*out == WINDOW_OFF_CPU && kind == PROFILE_CPU)
		return "this bpfprof samples the CPU only; start it with --off-cpu, or --wall for both";
	return NULL;
}

/*
 * GET /debug/pprof/profile (a pprof) or /flamegraph (the same window as an SVG): checked, then
 * queued for the session's thread, the connection suspended.
 */
static enum MHD_Result start_profile(struct server *s, struct MHD_Connection *conn, void **con_cls,
				     enum output_format format)
{
	const char *sec = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds");
	const char *pid = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "pid");
	const char *cgroup = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "cgroup");
	const char *comm = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "comm");
	const char *mode = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "mode");
	enum window_mode m = WINDOW_ANY;
	const char *why;
	double seconds = 30, p = 0;
	struct request *r;

	if (sec && (!parse_number(sec, &seconds) || seconds < 0.1 || seconds > SERVE_MAX_SECONDS))
		return REFUSE(conn, 400, "seconds=%s: give the profile's length in seconds, from 0.1 "
			      "to %d", sec, SERVE_MAX_SECONDS);
	if (pid && (!parse_number(pid, &p) || p < 1 || p > UINT32_MAX || p != floor(p)))
		return REFUSE(conn, 400, "pid=%s: give a process id, a whole number", pid);
	if (cgroup && cgroup[0] != '/')
		return REFUSE(conn, 400, "cgroup=%s: give a cgroup's path under the cgroup v2 mount, "
			      "e.g. /system.slice/ssh.service", cgroup);
	/* The kernel keeps a thread's name in 16 bytes: a longer one would match nothing. */
	if (comm && (!*comm || strlen(comm) > 15))
		return REFUSE(conn, 400, "comm=%s: give a thread's name as the graph's root frames "
			      "show it, 1 to 15 characters", comm);
	if (mode && (why = mode_refused(mode, s->session->kind, &m)))
		return REFUSE(conn, 400, "mode=%s: %s", mode, why);
	pthread_mutex_lock(&s->lock);
	if (s->stopping || s->profiles >= SERVE_MAX_PROFILES) {
		bool stopping = s->stopping;

		pthread_mutex_unlock(&s->lock);
		return stopping ? REFUSE(conn, 503, "bpfprof is stopping; ask again when it runs")
				: REFUSE(conn, 503, "%d profiles are being taken already; ask again when "
					 "one is done", SERVE_MAX_PROFILES);
	}
	r = xcalloc(1, sizeof(*r));
	r->conn = conn;
	r->format = format;
	r->seconds = seconds;
	r->filter = (struct window_filter){
		.tgid = (uint32_t)p,
		.cgroup = cgroup ? xstrdup(cgroup) : NULL,
		.comm = comm ? xstrdup(comm) : NULL,
		.mode = m,
	};
	r->next = s->queued;
	s->queued = r;
	s->profiles++;
	*con_cls = r;
	/* Suspended under the lock: the session's thread resumes it only once it has it. */
	MHD_suspend_connection(conn);
	pthread_mutex_unlock(&s->lock);
	return MHD_YES;
}

/* A POST to /debug/pprof/symbol, its body being read: this marks it. */
static char reading_symbols;

/*
 * /debug/pprof/symbol: go tool pprof, having fetched a profile, asks there
 * for names of the addresses in mappings with none. Every frame bpfprof can
 * name is named in the profile itself, so none are added: an empty answer
 * (GET: "num_symbols: 0"), which pprof takes as that.
 */
static enum MHD_Result answer_symbols(struct MHD_Connection *conn, const char *method,
				      size_t *upload_size, void **con_cls)
{
	static char none[] = "num_symbols: 0\n";

	if (strcmp(method, MHD_HTTP_METHOD_POST))
		return answer(conn, 200, "text/plain; charset=utf-8", none, sizeof(none) - 1, false);
	if (*con_cls != &reading_symbols) {
		*con_cls = &reading_symbols;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;	/* the addresses asked for: read, none named */
		return MHD_YES;
	}
	return answer(conn, 200, "text/plain; charset=utf-8", none + sizeof(none) - 1, 0, false);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct server *s = cls;
	struct request *r = *con_cls;

	(void)version;
	(void)upload;
	if (!strcmp(url, "/debug/pprof/symbol"))
		return answer_symbols(conn, method, upload_size, con_cls);
	if (r) {
		/* Resumed: the session's thread has answered it. */
		char *body = r->body;

		r->body = NULL;
		return answer(conn, r->status, r->type, body, r->len, true);
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return REFUSE(conn, 405, "%s %s: only GET is answered here; see /", method, url);
	if (!strcmp(url, "/"))
		return answer(conn, 200, "text/html; charset=utf-8", (char *)index_page,
			      sizeof(index_page) - 1, false);
	if (!strcmp(url, "/metrics"))
		return answer_metrics(s, conn);
	if (!strcmp(url, "/debug/pprof/profile"))
		return start_profile(s, conn, con_cls, FORMAT_PPROF);
	if (!strcmp(url, "/flamegraph"))
		return start_profile(s, conn, con_cls, FORMAT_SVG);
	return REFUSE(conn, 404, "%s: no such page; / lists what there is (/debug/pprof/profile, "
		      "/flamegraph, /metrics)", url);
}

/* A request's connection is done with (answered, or gone): its request goes too. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct server *s = cls;
	struct request *r = *con_cls;

	(void)conn;
	(void)why;
	if (!r || *con_cls == &reading_symbols) {
		*con_cls = NULL;
		return;
	}
	free(r->body);
	free((char *)r->filter.cgroup);
	free((char *)r->filter.comm);
	free(r);
	*con_cls = NULL;
	pthread_mutex_lock(&s->lock);
	s->profiles--;
	pthread_mutex_unlock(&s->lock);
}

static void log_mhd(void *cls, const char *fmt, va_list ap)
{
	struct strbuf sb;

	(void)cls;
	if (!verbose)
		return;
	strbuf_init(&sb);
	strbuf_vaddf(&sb, fmt, ap);
	while (sb.len && sb.buf[sb.len - 1] == '\n')
		sb.buf[--sb.len] = '\0';
	debug("http: %s", sb.buf);
	strbuf_release(&sb);
}

/* A socket listening on addr, "HOST:PORT" or "[HOST]:PORT"; -1 and a message if not. */
static int listen_on(const char *addr, int *family)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV }, *ai;
	const char *colon = strrchr(addr, ':');
	char *host;
	int fd, err, one = 1;

	if (!colon || colon == addr || !colon[1])
		return error("--listen %s: give HOST:PORT, e.g. 127.0.0.1:6060 or [::1]:6060", addr);
	if (addr[0] == '[' && colon[-1] == ']')
		host = xstrndup(addr + 1, colon - addr - 2);
	else
		host = xstrndup(addr, colon - addr);
	err = getaddrinfo(host, colon + 1, &hints, &ai);
	free(host);
	if (err)
		return error("--listen %s: %s; give HOST:PORT, e.g. 127.0.0.1:6060", addr,
			     gai_strerror(err));
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		err = errno;
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return error("cannot listen on %s: %s; %s", addr, strerror(err),
			     err == EADDRINUSE ? "give another port, or stop what listens there"
			     : err == EADDRNOTAVAIL ? "give an address of this machine"
						    : "check the address");
	}
	*family = ai->ai_family;
	freeaddrinfo(ai);
	return fd;
}

/* What the socket is bound to, as a URL's host and port. */
static void say_listening(int fd, int family)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	char host[NI_MAXHOST], port[NI_MAXSERV];

	if (getsockname(fd, (struct sockaddr *)&sa, &len) ||
	    getnameinfo((struct sockaddr *)&sa, len, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV))
		return;
	fprintf(stderr, "bpfprof: serving on http://%s%s%s:%s/ (profiles, /metrics)\n",
		family == AF_INET6 ? "[" : "", host, family == AF_INET6 ? "]" : "", port);
}

static const struct sink_ops server_ops;

struct server *server_start(const char *addr, struct profile *session)
{
	sigset_t all, old;
	struct server *s;
	int fd, family = AF_INET;

	if ((fd = listen_on(addr, &family)) < 0)
		return NULL;
	s = xcalloc(1, sizeof(*s));
	s->sink.ops = &server_ops;
	s->listen_fd = fd;
	s->session = session;
	pthread_mutex_init(&s->lock, NULL);
	/* Its thread blocks every signal: they stay the session's (a stop, the writing's end). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	s->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME |
					     MHD_USE_ERROR_LOG,
				     0, NULL, NULL, on_request, s,
				     MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
				     MHD_OPTION_CONNECTION_LIMIT, 64u,
				     MHD_OPTION_CONNECTION_TIMEOUT, 60u,
				     MHD_OPTION_EXTERNAL_LOGGER, log_mhd, NULL,
				     MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!s->daemon) {
		error("cannot start the HTTP server on %s: %s", addr,
		      *netlibs_why() ? netlibs_why() : strerror(errno));
		close(fd);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	say_listening(fd, family);
	return s;
}

/* The window is over: its pprof (or SVG) in memory, the connection resumed to send it. */
static void answer_window(struct request *r, uint64_t end_ns)
{
	struct write_options wo = { 0 };
	FILE *f;
	int err;

	window_close(&r->window, end_ns);
	r->status = 200;
	r->type = r->format == FORMAT_SVG ? "image/svg+xml" : "application/octet-stream";
	f = open_memstream(&r->body, &r->len);
	err = f ? write_profile(f, &r->window.profile, r->format, &wo) : -errno;
	/* Closed once, whatever the writing said. */
	if (f && fclose(f) && !err)
		err = -errno;
	if (err) {
		free(r->body);
		r->status = 500;
		r->type = "text/plain; charset=utf-8";
		r->body = reason(&r->len, "cannot write the profile: %s", strerror(-err));
	}
	window_release(&r->window);
	/* Resumed last: from here the request is the server thread's. */
	MHD_resume_connection(r->conn);
}

struct sink *server_sink(struct server *s)
{
	return &s->sink;
}

/* Requests the server thread queued, now the session thread's (fresh). */
static void take_queued(struct server *s)
{
	struct request *r;

	pthread_mutex_lock(&s->lock);
	while ((r = s->queued)) {
		s->queued = r->next;
		r->next = s->fresh;
		s->fresh = r;
	}
	pthread_mutex_unlock(&s->lock);
}

/* Now, when a request came: its window begins at a drain's flip; else the next window's end. */
static uint64_t server_due(struct sink *k)
{
	struct server *s = (struct server *)k;
	struct request *r;
	uint64_t next = 0;

	take_queued(s);
	if (s->fresh)
		return 1;
	for (r = s->open; r; r = r->next)
		if (!next || r->end_ns < next)
			next = r->end_ns;
	return next;
}

/* Answers r at once: bpfprof is stopping. */
static void refuse_stopping(struct request *r)
{
	r->status = 503;
	r->type = "text/plain; charset=utf-8";
	r->body = reason(&r->len, "bpfprof is stopping; ask again when it runs");
	MHD_resume_connection(r->conn);
}

/* No window opens or ends from now on: what is queued or open is answered 503. */
static void stop_serving(struct server *s)
{
	struct request *r;

	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_mutex_unlock(&s->lock);
	take_queued(s);
	while ((r = s->fresh)) {
		s->fresh = r->next;
		refuse_stopping(r);
	}
	while ((r = s->open)) {
		s->open = r->next;
		window_release(&r->window);
		refuse_stopping(r);
	}
}

/* Windows whose seconds are over end at the flip; new requests' windows begin there. */
static int server_drained(struct sink *k, uint64_t flip_ns, uint64_t flip_wall_ns, bool last)
{
	struct server *s = (struct server *)k;
	struct request *r, **p;

	if (last) {
		stop_serving(s);
		return 0;
	}
	for (p = &s->open; (r = *p);) {
		if (r->end_ns <= flip_ns) {
			*p = r->next;
			answer_window(r, flip_ns);
			continue;
		}
		p = &r->next;
	}
	while ((r = s->fresh)) {
		s->fresh = r->next;
		window_open(&r->window, s->session, flip_ns, flip_wall_ns, &r->filter);
		r->end_ns = flip_ns + (uint64_t)(r->seconds * 1e9);
		r->next = s->open;
		s->open = r;
	}
	return 0;
}

void server_set_metrics(struct server *s, const char *text)
{
	char *copy = xstrdup(text);

	pthread_mutex_lock(&s->lock);
	free(s->metrics);
	s->metrics = copy;
	pthread_mutex_unlock(&s->lock);
}

/* What is still open answered 503, the answers out for up to a second, the server stopped. */
static void server_free(struct sink *k, struct run_figures *f)
{
	struct server *s = (struct server *)k;
	unsigned profiles, i;

	(void)f;
	stop_serving(s);
	for (i = 0; i < 100; i++) {
		pthread_mutex_lock(&s->lock);
		profiles = s->profiles;
		pthread_mutex_unlock(&s->lock);
		if (!profiles)
			break;
		usleep(10000);
	}
	MHD_stop_daemon(s->daemon);
	close(s->listen_fd);
	pthread_mutex_destroy(&s->lock);
	free(s->metrics);
	free(s);
}

static const struct sink_ops server_ops = {
	.due = server_due, .drained = server_drained, .free = server_free,
};
