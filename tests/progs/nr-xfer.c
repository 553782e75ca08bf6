// SPDX-License-Identifier: GPL-2.0
/*
 * nr-xfer: move a known byte pattern over TCP or UDP and check it arrived.
 *
 *   nr-xfer recv tcp|udp PORT BYTES [TIMEOUT_S [mark|nomark [RCVBUF]]]
 *   nr-xfer send tcp|udp ADDR PORT BYTES [CHUNK]
 *
 * The receiver listens on all IPv6 and IPv4 addresses, checks every byte
 * against the pattern and prints "received N bytes, M corrupt".  It exits 0
 * only when all BYTES arrived, none corrupt, and for UDP every datagram
 * exactly once (each carries its offset; a datagram that overlaps one seen
 * before counts as corrupt), 1 otherwise.  Its UDP socket buffer is large
 * enough for all of them, so that a datagram lost is lost on the way, not
 * in the receiver.  The sender writes CHUNK bytes at a time (default 1400;
 * for UDP, one datagram each, paced).  "mark" makes the receiving socket
 * (for TCP, the accepted one) a memalloc socket with SO_MEMALLOC.  RCVBUF
 * sets SO_RCVBUF (for TCP on the listener, before the handshake that
 * announces the window): a small one bounds what a TCP sender has in
 * flight.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#ifndef SO_MEMALLOC
#define SO_MEMALLOC 76	/* until the system headers have it */
#endif

#define CHUNK 1400
#define CHUNK_MAX 65000
/* UDP: the most BYTES a receiver tracks byte by byte. */
#define UDP_WANT_MAX (64UL << 20)

static unsigned char pattern_at(unsigned long off)
{
	return (unsigned char)(off * 2654435761UL >> 13);
}

static int die(const char *what)
{
	fprintf(stderr, "nr-xfer: %s: %s\n", what, strerror(errno));
	return 1;
}

static int do_recv(int tcp, const char *port, unsigned long want, int timeout,
		   int mark, int rcvbuf_asked)
{
	struct sockaddr_in6 addr = { .sin6_family = AF_INET6 };
	struct timeval tv = { .tv_sec = timeout };
	unsigned long got = 0, bad = 0, i;
	unsigned char buf[65536];
	int fd, conn, one = 1, rcvbuf = 16 << 20;
	unsigned char *seen = NULL;
	ssize_t n;

	if (!tcp) {
		if (want > UDP_WANT_MAX) {
			fprintf(stderr, "nr-xfer: UDP receives at most %lu bytes\n", UDP_WANT_MAX);
			return 2;
		}
		seen = calloc(want ? want : 1, 1);
		if (!seen)
			return die("calloc");
	}

	addr.sin6_port = htons(atoi(port));
	addr.sin6_addr = in6addr_any;
	fd = socket(AF_INET6, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0)
		return die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)))
		return die("bind");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	/* As root, past rmem_max: the receiver itself must drop nothing. */
	if (rcvbuf_asked)
		rcvbuf = rcvbuf_asked;
	if ((!tcp || rcvbuf_asked) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		return die("SO_RCVBUFFORCE");
	conn = fd;
	if (tcp) {
		if (listen(fd, 1))
			return die("listen");
		conn = accept(fd, NULL, NULL);
		if (conn < 0)
			return die("accept");
		setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	if (mark && setsockopt(conn, SOL_SOCKET, SO_MEMALLOC, &one, sizeof(one)))
		return die("SO_MEMALLOC");
	while (got < want) {
		n = recv(conn, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		/* UDP datagrams carry their offset in the first 8 bytes. */
		if (!tcp) {
			unsigned long off;

			if (n < 8) {
				bad++;
				continue;
			}
			memcpy(&off, buf, 8);
			if (off >= want || (unsigned long)n > want - off) {
				bad++;
				continue;
			}
			for (i = 8; i < (unsigned long)n; i++)
				bad += buf[i] != pattern_at(off + i);
			/* Each byte once: a duplicate or overlap is corrupt. */
			for (i = 0; i < (unsigned long)n; i++)
				bad += seen[off + i]++ != 0;
		} else {
			for (i = 0; i < (unsigned long)n; i++)
				bad += buf[i] != pattern_at(got + i);
		}
		got += n;
	}
	printf("received %lu bytes, %lu corrupt\n", got, bad);
	free(seen);
	return bad || got != want;
}

static int do_send(int tcp, const char *host, const char *port,
		   unsigned long want, unsigned long chunk)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	unsigned long off = 0, i, len;
	static unsigned char buf[CHUNK_MAX];
	struct sockaddr *sa;
	socklen_t salen;
	int fd;

	if (inet_pton(AF_INET, host, &a4.sin_addr) == 1) {
		a4.sin_port = htons(atoi(port));
		sa = (struct sockaddr *)&a4;
		salen = sizeof(a4);
	} else if (inet_pton(AF_INET6, host, &a6.sin6_addr) == 1) {
		a6.sin6_port = htons(atoi(port));
		sa = (struct sockaddr *)&a6;
		salen = sizeof(a6);
	} else {
		fprintf(stderr, "nr-xfer: '%s' is not an IP address\n", host);
		return 2;
	}
	fd = socket(sa->sa_family, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0)
		return die("socket");
	if (connect(fd, sa, salen))
		return die("connect");
	while (off < want) {
		len = want - off < chunk ? want - off : chunk;
		if (tcp) {
			for (i = 0; i < len; i++)
				buf[i] = pattern_at(off + i);
		} else {
			memcpy(buf, &off, 8);
			for (i = 8; i < len; i++)
				buf[i] = pattern_at(off + i);
			/* Pace UDP a little so a slow guest can keep up. */
			usleep(200);
		}
		if (send(fd, buf, len, 0) != (ssize_t)len)
			return die("send");
		off += len;
	}
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
	if (!strcmp(argv[1], "recv"))
		return do_recv(tcp, argv[3], strtoul(argv[4], NULL, 0),
			       argc > 5 ? atoi(argv[5]) : 10,
			       argc > 6 && !strcmp(argv[6], "mark"),
			       argc > 7 ? atoi(argv[7]) : 0);
	if (!strcmp(argv[1], "send") && (argc == 6 || argc == 7)) {
		unsigned long chunk = argc == 7 ? strtoul(argv[6], NULL, 0) : CHUNK;

		if (chunk < 8 || chunk > CHUNK_MAX) {
			fprintf(stderr, "nr-xfer: CHUNK must be 8 to %d bytes\n", CHUNK_MAX);
			return 2;
		}
		return do_send(tcp, argv[3], argv[4], strtoul(argv[5], NULL, 0), chunk);
	}
usage:
	fprintf(stderr, "usage: nr-xfer recv tcp|udp PORT BYTES [TIMEOUT_S [mark|nomark [RCVBUF]]]\n"
			"       nr-xfer send tcp|udp ADDR PORT BYTES [CHUNK]\n");
	return 2;
}
