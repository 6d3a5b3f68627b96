// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof/netlibs.h"
#include "bpfprof/output.h"
#include "bpfprof/push.h"
#include "bpfprof/run_figures.h"
#include "bpfprof/util.h"
#include "bpfprof/window.h"

/* An interval's request, waiting to go. */
struct interval {
	struct push_request rq;
	bool maybe_there;		/* a POST of it went whole and got no answer */
	struct interval *next;
};

struct pusher {
	struct sink sink;
	struct push_target *t;		/* where to, and how */
	struct window_series series;	/* the session thread's */
	pthread_t thread;
	pthread_mutex_t lock;		/* for what follows */
	pthread_cond_t cond;
	struct interval *head, *tail;
	unsigned queued;
	bool stopping;
	uint64_t give_up_ns;		/* stopping: what is not sent by then is not */
	struct push_stats stats;
};

/* Pyroscope's ingest API (--push): the target and what it keeps. */
struct pyroscope {
	struct push_target t;
	const struct options *o;
	char *ingest;			/* URL/ingest?name=NAME, escaped */
};

/* "URL/ingest?name=NAME", the name escaped; NULL if libcurl cannot. */
static char *ingest_base(const struct options *o)
{
	CURL *curl = curl_easy_init();
	char *name = curl ? curl_easy_escape(curl, o->app_name, 0) : NULL;
	size_t n = strlen(o->push);
	struct strbuf sb;

	if (curl)
		curl_easy_cleanup(curl);
	if (!name)
		return NULL;
	strbuf_init(&sb);
	strbuf_addf(&sb, "%.*s/ingest?name=%s", (int)(n && o->push[n - 1] == '/' ? n - 1 : n),
		    o->push, name);
	curl_free(name);
	return strbuf_detach(&sb);
}

/* The interval's pprof, and the ingest URL for its whole seconds [from, until). */
static int pyroscope_encode(struct push_target *t, const struct profile *interval, uint64_t from,
			    uint64_t until, struct push_request *rq)
{
	struct pyroscope *pyro = (struct pyroscope *)t;
	struct write_options wo = { 0 };
	struct strbuf sb;
	FILE *f = open_memstream(&rq->body, &rq->len);
	int err = f ? write_profile(f, interval, FORMAT_PPROF, &wo) : -errno;

	if (f && fclose(f) && !err)
		err = -errno;
	if (err)
		return err;
	strbuf_init(&sb);
	strbuf_addf(&sb, "%s&from=%llu&until=%llu&format=pprof&sampleRate=%u&spyName=bpfprof",
		    pyro->ingest, (unsigned long long)from, (unsigned long long)until,
		    pyro->o->frequency);
	rq->url = strbuf_detach(&sb);
	return 0;
}

/* The pprof as a multipart form's part "profile", as Pyroscope's agents send it. */
static int pyroscope_perform(struct push_target *t, void *curl, const struct push_request *rq)
{
	curl_mime *mime = curl_mime_init(curl);
	curl_mimepart *part = curl_mime_addpart(mime);
	CURLcode rc;

	(void)t;
	curl_mime_name(part, "profile");
	curl_mime_filename(part, "profile.pprof");
	curl_mime_type(part, "application/octet-stream");
	curl_mime_data(part, rq->body, rq->len);
	curl_easy_setopt(curl, CURLOPT_URL, rq->url);
	curl_easy_setopt(curl, CURLOPT_MIMEPOST, mime);
	rc = curl_easy_perform(curl);
	curl_mime_free(mime);
	return rc;
}

/* 5xx and 429: the server is in trouble, or busy; 4xx: sending it again would not help. */
static bool pyroscope_again(long status)
{
	return status >= 500 || status == 429;
}

static void pyroscope_finish(struct push_target *t, const struct push_stats *st,
			     struct run_figures *f)
{
	struct pyroscope *pyro = (struct pyroscope *)t;

	if (f) {
		f->push = *st;
		f->pushed = true;
	}
	free(pyro->ingest);
	free(pyro);
}

/*
 * One POST: 0 sent; 1 to try again (no answer, or the target says so); -1 refused.
 * A request that went whole and got no answer (the server went, or was slower than the
 * timeout, after reading it) may have been kept: in->maybe_there, so that sending it again
 * is counted as perhaps sending it twice.
 */
static int post(struct push_target *t, CURL *curl, struct interval *in, long *status,
		char *why, size_t why_len)
{
	curl_off_t up = 0;
	CURLcode rc;

	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 5L);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, why);
	why[0] = '\0';
	rc = t->perform(t, curl, &in->rq);
	*status = 0;
	if (rc != CURLE_OK) {
		if (!why[0])
			snprintf(why, why_len, "%s", curl_easy_strerror(rc));
		/* The body is the form's bulk: all of it sent means the request went whole. */
		if (!curl_easy_getinfo(curl, CURLINFO_SIZE_UPLOAD_T, &up) && up >= (curl_off_t)in->rq.len)
			in->maybe_there = true;
		return 1;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
	if (*status >= 200 && *status < 300)
		return 0;
	snprintf(why, why_len, "the server answered %ld", *status);
	return t->again(*status) ? 1 : -1;
}

static void free_interval(struct interval *in)
{
	free(in->rq.url);
	free(in->rq.body);
	free(in);
}

/*
 * The pause before trying again: the server's Retry-After (429, 503) when it
 * gives one, up to RETRY_AFTER_MAX_S; else pause_ms, which doubles up to 8 s.
 */
static unsigned retry_pause_ms(CURL *curl, long status, unsigned *pause_ms, char *why,
			       size_t why_len)
{
	curl_off_t after = 0;
	unsigned ms = *pause_ms;
	size_t n = strlen(why);

	if (status && !curl_easy_getinfo(curl, CURLINFO_RETRY_AFTER, &after) && after > 0) {
		ms = (after < RETRY_AFTER_MAX_S ? after : RETRY_AFTER_MAX_S) * 1000;
		snprintf(why + n, why_len - n, ", asking for %lld s (Retry-After)", (long long)after);
	} else if (*pause_ms < 8000) {
		*pause_ms *= 2;
	}
	return ms;
}

/* Up to ms, or until stopping: a new interval queued meanwhile does not cut the pause short. */
static void pause_locked(struct pusher *p, unsigned ms)
{
	uint64_t until = now_ns() + ms * 1000000ULL, now;
	struct timespec ts;

	while (!p->stopping && (now = now_ns()) < until) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (until - now) / 1000000000;
		ts.tv_nsec += (until - now) % 1000000000;
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
	}
}

/* The sender: the oldest interval first, again (after a pause) until it goes or stopping ends it. */
static void *sender(void *arg)
{
	struct pusher *p = arg;
	char why[CURL_ERROR_SIZE + 64];
	unsigned pause_ms = 500, wait_ms;
	struct interval *in;
	bool said = false;
	CURL *curl = curl_easy_init();
	long status;
	int rc;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->stopping)
			pthread_cond_wait(&p->cond, &p->lock);
		if (!p->head || (p->stopping && now_ns() >= p->give_up_ns))
			break;
		in = p->head;
		pthread_mutex_unlock(&p->lock);
		rc = curl ? post(p->t, curl, in, &status, why, sizeof(why)) : 1;
		pthread_mutex_lock(&p->lock);
		if (rc <= 0) {
			/* Sent, or refused for good: either way it leaves the queue. */
			p->head = in->next;
			if (!p->head)
				p->tail = NULL;
			p->queued--;
			if (rc < 0) {
				p->stats.rejected++;
				warning("%s: an interval was refused (%s); dropped", p->t->option, why);
			} else {
				p->stats.sent++;
				p->stats.maybe_twice += in->maybe_there;
				if (said)
					warning("%s: %s answers again; sending the %u intervals that "
						"waited", p->t->option, p->t->server, p->queued);
				said = false;
			}
			free_interval(in);
			pause_ms = 500;
			continue;
		}
		p->stats.retries++;
		wait_ms = retry_pause_ms(curl, status, &pause_ms, why, sizeof(why));
		if (!said)
			warning("%s: cannot send to %s: %s; intervals wait (up to %d) and go when "
				"it answers", p->t->option, p->t->server, why, PUSH_QUEUE);
		said = true;
		/* Stopping: tried again every 0.1 s until its deadline. */
		if (!p->stopping)
			pause_locked(p, wait_ms);
		else
			usleep(100000);
	}
	pthread_mutex_unlock(&p->lock);
	if (curl)
		curl_easy_cleanup(curl);
	return NULL;
}

static const struct sink_ops push_ops;

struct sink *pusher_start(const struct options *o, struct profile *session, uint64_t start_ns,
			  uint64_t start_wall_ns)
{
	struct pyroscope *pyro;

	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		error("--push: libcurl cannot start%s%s", *netlibs_why() ? ": " : "", netlibs_why());
		return NULL;
	}
	pyro = xcalloc(1, sizeof(*pyro));
	pyro->ingest = ingest_base(o);
	curl_global_cleanup();
	if (!pyro->ingest) {
		error("--push: libcurl cannot escape the app name");
		free(pyro);
		return NULL;
	}
	pyro->o = o;
	pyro->t = (struct push_target){
		.option = "--push", .server = o->push, .encode = pyroscope_encode,
		.perform = pyroscope_perform, .again = pyroscope_again,
		.finish = pyroscope_finish, .interval = o->push_interval,
	};
	return push_sink_start(&pyro->t, session, start_ns, start_wall_ns);
}

struct sink *push_sink_start(struct push_target *t, struct profile *session, uint64_t start_ns,
			     uint64_t start_wall_ns)
{
	struct pusher *p;
	sigset_t all, old;
	int err;

	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		error("%s: libcurl cannot start%s%s", t->option, *netlibs_why() ? ": " : "",
		      netlibs_why());
		t->finish(t, NULL, NULL);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->sink.ops = &push_ops;
	p->t = t;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	series_start(&p->series, session, t->interval, start_ns, start_wall_ns);
	/* The sender blocks every signal: they stay the session's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&p->thread, NULL, sender, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		error("%s: cannot start its thread: %s", t->option, strerror(err));
		series_release(&p->series);
		t->finish(t, NULL, NULL);
		free(p);
		curl_global_cleanup();
		return NULL;
	}
	return &p->sink;
}

/* The interval in the queue; the oldest dropped if it is full. */
static void enqueue(struct pusher *p, struct interval *in)
{
	struct interval *old = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->queued >= PUSH_QUEUE && p->head && p->head->next) {
		/* Not the head: the sender may be sending it. */
		old = p->head->next;
		p->head->next = old->next;
		if (p->tail == old)
			p->tail = p->head;
		p->queued--;
		p->stats.dropped++;
	}
	if (p->tail)
		p->tail->next = in;
	else
		p->head = in;
	p->tail = in;
	p->queued++;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	if (old)
		free_interval(old);
}

static uint64_t push_due(struct sink *k)
{
	return ((struct pusher *)k)->series.due_ns;
}

/* The interval's request queued for the sender. */
static int push_drained(struct sink *k, uint64_t flip_ns, uint64_t flip_wall_ns, bool last)
{
	struct pusher *p = (struct pusher *)k;
	const struct profile *interval = &p->series.window.profile;
	uint64_t from = interval->start_wall_ns / 1000000000ULL;
	uint64_t until = flip_wall_ns / 1000000000ULL;
	struct interval *in;
	int err;

	if (!last && flip_ns < p->series.due_ns)
		return 0;
	in = xcalloc(1, sizeof(*in));
	series_close(&p->series, flip_ns);
	/* The interval ended on a whole second (or at the stop): until is where the next begins. */
	err = p->t->encode(p->t, interval, from, until > from ? until : from + 1, &in->rq);
	if (err) {
		warning("%s: cannot write an interval's profile: %s; dropped", p->t->option,
			strerror(-err));
		free_interval(in);
	} else {
		enqueue(p, in);
	}
	series_next(&p->series, flip_ns, flip_wall_ns, last);
	return 0;
}

/* What is left sent, for a bounded time; the rest counted as not sent. */
static void push_free(struct sink *k, struct run_figures *f)
{
	struct pusher *p = (struct pusher *)k;
	struct interval *in;

	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	p->give_up_ns = now_ns() + PUSH_STOP_S * 1000000000ULL;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	while ((in = p->head)) {
		p->head = in->next;
		p->stats.unsent++;
		free_interval(in);
	}
	p->t->finish(p->t, &p->stats, f);
	series_release(&p->series);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
	curl_global_cleanup();
}

void push_sink_stats(struct sink *k, struct push_stats *st, unsigned *waiting)
{
	struct pusher *p = (struct pusher *)k;

	pthread_mutex_lock(&p->lock);
	*st = p->stats;
	*waiting = p->queued;
	pthread_mutex_unlock(&p->lock);
}

static const struct sink_ops push_ops = {
	.due = push_due, .drained = push_drained, .free = push_free,
};
