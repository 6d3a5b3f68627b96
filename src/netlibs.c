// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * libcurl (--push) and libmicrohttpd (--listen), loaded when first used,
 * not at every start: linked, they and the TLS stacks they bring (GnuTLS,
 * OpenSSL, Kerberos, LDAP: 30 libraries) were 5.5 MB of every run's RSS
 * and part of each exec's linking. push.c and serve.c call the libraries'
 * own functions; these definitions stand in for them and forward each
 * call to the library, opened by its soname on the first. A library that
 * cannot be opened makes its first function fail as the library would
 * (curl_global_init, MHD_start_daemon), and netlibs_why() says why.
 */
/* curl.h's type-checking macros would rename the definitions below. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <dlfcn.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "bpfprof/netlibs.h"
#include "bpfprof/util.h"

struct netlib {
	const char *soname, *package;
	pthread_once_t once;
	void *handle;
};

static struct netlib curl_lib = { "libcurl.so.4", "libcurl4", PTHREAD_ONCE_INIT, NULL };
static struct netlib mhd_lib = { "libmicrohttpd.so.12", "libmicrohttpd12", PTHREAD_ONCE_INIT,
				 NULL };

static char why[512];

static void open_lib(struct netlib *lib)
{
	if (!(lib->handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL)))
		snprintf(why, sizeof(why), "%s cannot be loaded (%s): install %s (sudo make deps)",
			 lib->soname, dlerror(), lib->package);
}

static void open_curl(void)
{
	open_lib(&curl_lib);
}

static void open_mhd(void)
{
	open_lib(&mhd_lib);
}

const char *netlibs_why(void)
{
	return why;
}

/* name's address in the library (opened by open on first use); NULL if it cannot be had. */
static void *sym(struct netlib *lib, void (*open)(void), const char *name)
{
	pthread_once(&lib->once, open);
	return lib->handle ? dlsym(lib->handle, name) : NULL;
}

/* A function of the library's: the same signature, forwarded; fail returned if it is not there. */
#define FORWARD(lib, open, ret, name, params, args, fail)                              \
	ret name params                                                                \
	{                                                                              \
		static ret(*f) params;                                                 \
		if (!__atomic_load_n(&f, __ATOMIC_ACQUIRE))                            \
			__atomic_store_n(&f, (ret(*) params)sym(&lib, open, #name),     \
					 __ATOMIC_RELEASE);                            \
		return f ? f args : fail;                                              \
	}
#define FORWARD_VOID(lib, open, name, params, args)                                    \
	void name params                                                               \
	{                                                                              \
		static void(*f) params;                                                \
		if (!__atomic_load_n(&f, __ATOMIC_ACQUIRE))                            \
			__atomic_store_n(&f, (void(*) params)sym(&lib, open, #name),    \
					 __ATOMIC_RELEASE);                            \
		if (f)                                                                 \
			f args;                                                        \
	}

/* libcurl -------------------------------------------------------------------------- */

FORWARD(curl_lib, open_curl, CURLcode, curl_global_init, (long flags), (flags), CURLE_FAILED_INIT)
FORWARD_VOID(curl_lib, open_curl, curl_global_cleanup, (void), ())
FORWARD(curl_lib, open_curl, CURL *, curl_easy_init, (void), (), NULL)
FORWARD_VOID(curl_lib, open_curl, curl_easy_cleanup, (CURL *c), (c))
FORWARD(curl_lib, open_curl, CURLcode, curl_easy_perform, (CURL *c), (c), CURLE_FAILED_INIT)
FORWARD(curl_lib, open_curl, const char *, curl_easy_strerror, (CURLcode rc), (rc),
	"libcurl not loaded")
FORWARD(curl_lib, open_curl, char *, curl_easy_escape, (CURL *c, const char *s, int n), (c, s, n),
	NULL)
FORWARD_VOID(curl_lib, open_curl, curl_free, (void *p), (p))
FORWARD(curl_lib, open_curl, curl_mime *, curl_mime_init, (CURL *c), (c), NULL)
FORWARD_VOID(curl_lib, open_curl, curl_mime_free, (curl_mime *m), (m))
FORWARD(curl_lib, open_curl, curl_mimepart *, curl_mime_addpart, (curl_mime *m), (m), NULL)
FORWARD(curl_lib, open_curl, CURLcode, curl_mime_name, (curl_mimepart *p, const char *s), (p, s),
	CURLE_FAILED_INIT)
FORWARD(curl_lib, open_curl, CURLcode, curl_mime_filename, (curl_mimepart *p, const char *s),
	(p, s), CURLE_FAILED_INIT)
FORWARD(curl_lib, open_curl, CURLcode, curl_mime_type, (curl_mimepart *p, const char *s), (p, s),
	CURLE_FAILED_INIT)
FORWARD(curl_lib, open_curl, CURLcode, curl_mime_data,
	(curl_mimepart *p, const char *d, size_t n), (p, d, n), CURLE_FAILED_INIT)
FORWARD(curl_lib, open_curl, struct curl_slist *, curl_slist_append,
	(struct curl_slist *l, const char *s), (l, s), NULL)
FORWARD_VOID(curl_lib, open_curl, curl_slist_free_all, (struct curl_slist *l), (l))

/*
 * The two variadic ones take exactly one value after the option: a long,
 * a pointer or a curl_off_t, each in an integer register on x86-64, so it
 * is passed on as one 64-bit word.
 */
CURLcode curl_easy_setopt(CURL *c, CURLoption option, ...)
{
	static CURLcode (*f)(CURL *, CURLoption, ...);
	va_list ap;
	long value;

	if (!f)
		f = (CURLcode(*)(CURL *, CURLoption, ...))sym(&curl_lib, open_curl, "curl_easy_setopt");
	va_start(ap, option);
	value = va_arg(ap, long);
	va_end(ap);
	return f ? f(c, option, value) : CURLE_FAILED_INIT;
}

CURLcode curl_easy_getinfo(CURL *c, CURLINFO info, ...)
{
	static CURLcode (*f)(CURL *, CURLINFO, ...);
	va_list ap;
	void *out;

	if (!f)
		f = (CURLcode(*)(CURL *, CURLINFO, ...))sym(&curl_lib, open_curl, "curl_easy_getinfo");
	va_start(ap, info);
	out = va_arg(ap, void *);
	va_end(ap);
	return f ? f(c, info, out) : CURLE_FAILED_INIT;
}

/* libmicrohttpd -------------------------------------------------------------------- */

FORWARD(mhd_lib, open_mhd, struct MHD_Response *, MHD_create_response_from_buffer,
	(size_t n, void *b, enum MHD_ResponseMemoryMode m), (n, b, m), NULL)
FORWARD(mhd_lib, open_mhd, enum MHD_Result, MHD_add_response_header,
	(struct MHD_Response *r, const char *h, const char *v), (r, h, v), MHD_NO)
FORWARD(mhd_lib, open_mhd, enum MHD_Result, MHD_queue_response,
	(struct MHD_Connection *c, unsigned int s, struct MHD_Response *r), (c, s, r), MHD_NO)
FORWARD_VOID(mhd_lib, open_mhd, MHD_destroy_response, (struct MHD_Response *r), (r))
FORWARD(mhd_lib, open_mhd, const char *, MHD_lookup_connection_value,
	(struct MHD_Connection *c, enum MHD_ValueKind k, const char *key), (c, k, key), NULL)
FORWARD_VOID(mhd_lib, open_mhd, MHD_suspend_connection, (struct MHD_Connection *c), (c))
FORWARD_VOID(mhd_lib, open_mhd, MHD_resume_connection, (struct MHD_Connection *c), (c))
FORWARD_VOID(mhd_lib, open_mhd, MHD_stop_daemon, (struct MHD_Daemon *d), (d))
FORWARD(mhd_lib, open_mhd, struct MHD_Daemon *, MHD_start_daemon_va,
	(unsigned int fl, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
	 MHD_AccessHandlerCallback dh, void *dh_cls, va_list ap),
	(fl, port, apc, apc_cls, dh, dh_cls, ap), NULL)

/* The variadic start: its options passed on as the library's _va form takes them. */
struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
				    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	struct MHD_Daemon *d;
	va_list ap;

	va_start(ap, dh_cls);
	d = MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}
