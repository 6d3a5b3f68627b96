/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * libcurl and libmicrohttpd, opened when --push and --listen first call
 * them (src/netlibs.c): push.c and serve.c call their functions as usual.
 */
#ifndef BPFPROF_NETLIBS_H
#define BPFPROF_NETLIBS_H

/* Why a library could not be loaded ("" if none did): its soname, the loader's reason, the package. */
const char *netlibs_why(void);

#endif
