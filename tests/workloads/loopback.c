// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Sends UDP datagrams to itself over the loopback device and reads them
 * back: the kernel delivers each one in the network's softirq, served as
 * the sender leaves sendto() (bottom halves enabled again), so much of this
 * process's time is softirq time, as /proc/stat counts it.
 *
 * usage: loopback SECONDS
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 10);
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	int rx = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	int tx = socket(AF_INET, SOCK_DGRAM, 0);
	static char buf[1400];
	int i;

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&addr, sizeof(addr)) ||
	    getsockname(rx, (struct sockaddr *)&addr, &len))
		return 1;
	while (now() < end)
		for (i = 0; i < 100; i++) {
			if (sendto(tx, buf, sizeof(buf), 0, (struct sockaddr *)&addr, len) < 0)
				return 1;
			while (recv(rx, buf, sizeof(buf), 0) > 0)
				;
		}
	return 0;
}
