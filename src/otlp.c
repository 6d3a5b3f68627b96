// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * --otlp: the intervals to an OpenTelemetry Collector over OTLP/HTTP, as the
 * OTLP specification says (opentelemetry-proto's docs/specification.md):
 * binary protobuf, "Content-Type: application/x-protobuf", gzipped with
 * "Content-Encoding: gzip"; 429, 502, 503 and 504 are tried again, every
 * other 4xx and 5xx is not; a request over 64 MiB (before compression) is
 * not made. The queue, the pauses and the stop are push.c's.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/otlp.h"
#include "bpfprof/output.h"
#include "bpfprof/pb.h"
#include "bpfprof/push.h"
#include "bpfprof/run_figures.h"
#include "bpfprof/util.h"

struct otlp_target {
	struct push_target t;
	const struct options *o;
	char *url;			/* where every request goes */
};

/* URL as given if it has a path, else with the specification's default path. */
static char *profiles_url(const char *url)
{
	const char *host = strstr(url, "://");
	size_t n = strlen(url);
	struct strbuf sb;

	host = host ? host + 3 : url;
	strbuf_init(&sb);
	if (!strchr(host, '/') || !strcmp(strchr(host, '/'), "/"))
		strbuf_addf(&sb, "%.*s%s", (int)(n && url[n - 1] == '/' ? n - 1 : n), url,
			    OTLP_PROFILES_PATH);
	else
		strbuf_addstr(&sb, url);
	return strbuf_detach(&sb);
}

/* The interval's request, gzipped; -EFBIG over the specification's 64 MiB. */
static int otlp_encode(struct push_target *t, const struct profile *interval, uint64_t from,
		       uint64_t until, struct push_request *rq)
{
	struct otlp_target *ot = (struct otlp_target *)t;
	struct write_options wo = { .app_name = ot->o->app_name };
	struct pb_msg bare = { 0 };
	struct pb_gzip *gz;
	FILE *f = open_memstream((char **)&bare.buf, &bare.len);
	int err = f ? write_profile(f, interval, FORMAT_OTLP, &wo) : -errno;

	(void)from;
	(void)until;
	if (f && fclose(f) && !err)
		err = -errno;
	if (!err && bare.len > OTLP_MAX_BODY)
		err = -EFBIG;
	if (!err && !(f = open_memstream(&rq->body, &rq->len)))
		err = -errno;
	if (!err) {
		gz = xmalloc(sizeof(*gz));
		if (!(err = pb_gzip_open(gz, f))) {
			pb_gzip_write(gz, &bare);
			err = pb_gzip_close(gz);
		}
		free(gz);
		if (fclose(f) && !err)
			err = -errno;
	}
	free(bare.buf);
	if (!err)
		rq->url = xstrdup(ot->url);
	return err;
}

static int otlp_perform(struct push_target *t, void *curl, const struct push_request *rq)
{
	struct curl_slist *headers = NULL;
	CURLcode rc;

	(void)t;
	headers = curl_slist_append(headers, "Content-Type: application/x-protobuf");
	headers = curl_slist_append(headers, "Content-Encoding: gzip");
	/* The Collector's name for the schema written (absent also means 1). */
	headers = curl_slist_append(headers, "OTLP-Profiles-Development-Version: 1");
	curl_easy_setopt(curl, CURLOPT_URL, rq->url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, rq->body);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
	rc = curl_easy_perform(curl);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(headers);
	return rc;
}

/* The specification's retryable codes; any other 4xx or 5xx MUST NOT be retried. */
static bool otlp_again(long status)
{
	return status == 429 || status == 502 || status == 503 || status == 504;
}

static void otlp_finish(struct push_target *t, const struct push_stats *st, struct run_figures *f)
{
	struct otlp_target *ot = (struct otlp_target *)t;

	if (f) {
		f->otlp = *st;
		f->otlp_sent = true;
	}
	free(ot->url);
	free(ot);
}

struct sink *otlp_start(const struct options *o, struct profile *session, uint64_t start_ns,
			uint64_t start_wall_ns)
{
	struct otlp_target *ot = xcalloc(1, sizeof(*ot));

	ot->o = o;
	ot->url = profiles_url(o->otlp);
	ot->t = (struct push_target){
		.option = "--otlp", .server = ot->url, .encode = otlp_encode,
		.perform = otlp_perform, .again = otlp_again, .finish = otlp_finish,
		.interval = o->push_interval,
	};
	return push_sink_start(&ot->t, session, start_ns, start_wall_ns);
}
