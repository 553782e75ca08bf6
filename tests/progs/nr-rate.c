// SPDX-License-Identifier: GPL-2.0
/*
 * nr-rate: receive rate for the benchmarks.
 *
 *   nr-rate recv udp|tcp PORT SECONDS   count what arrives in SECONDS from
 *                                       the first packet; print
 *                                       "nr-rate: N packets, B bytes, S s"
 *   nr-rate send udp|tcp ADDR PORT SECONDS SIZE
 *                                       send SIZE-byte datagrams (or writes)
 *                                       as fast as possible for SECONDS
 *
 * IPv4 only; the receiver measures, since what a sender pushes out is not
 * what a slow receiver takes in.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int die(const char *what)
{
	fprintf(stderr, "nr-rate: %s: %s\n", what, strerror(errno));
	return 1;
}

static int do_recv(int tcp, int port, double seconds)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 1 };
	unsigned long packets = 0, bytes = 0;
	static char buf[65536];
	int fd, conn, one = 1, rcvbuf = 4 << 20;
	double start = 0, t = 0;
	ssize_t n;

	fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0)
		return die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)))
		return die("bind");
	conn = fd;
	if (tcp) {
		if (listen(fd, 1))
			return die("listen");
		conn = accept(fd, NULL, NULL);
		if (conn < 0)
			return die("accept");
	}
	setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (;;) {
		n = recv(conn, buf, sizeof(buf), 0);
		if (n < 0 && errno == EAGAIN && !start)
			continue;	/* nothing yet */
		if (n <= 0)
			break;
		if (!start)
			start = now();
		packets++;
		bytes += n;
		t = now() - start;
		if (t >= seconds)
			break;
	}
	printf("nr-rate: %lu packets, %lu bytes, %.3f s\n", packets, bytes, t);
	return packets == 0;
}

static int do_send(int tcp, const char *host, int port, double seconds,
		   size_t size)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
	static char buf[65000];
	double end;
	int fd;

	if (size == 0 || size > sizeof(buf) || inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
		fprintf(stderr, "nr-rate: bad address or size\n");
		return 2;
	}
	fd = socket(AF_INET, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0)
		return die("socket");
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)))
		return die("connect");
	memset(buf, 0x5a, size);
	end = now() + seconds;
	while (now() < end)
		if (send(fd, buf, size, 0) < 0 && errno != ENOBUFS && errno != ECONNREFUSED)
			return die("send");
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int tcp;

	if (argc < 5)
		goto usage;
	tcp = !strcmp(argv[2], "tcp");
	if (!tcp && strcmp(argv[2], "udp"))
		goto usage;
	if (!strcmp(argv[1], "recv") && argc == 5)
		return do_recv(tcp, atoi(argv[3]), atof(argv[4]));
	if (!strcmp(argv[1], "send") && argc == 7)
		return do_send(tcp, argv[3], atoi(argv[4]), atof(argv[5]),
			       strtoul(argv[6], NULL, 0));
usage:
	fprintf(stderr, "usage: nr-rate recv udp|tcp PORT SECONDS\n"
			"       nr-rate send udp|tcp ADDR PORT SECONDS SIZE\n");
	return 2;
}
