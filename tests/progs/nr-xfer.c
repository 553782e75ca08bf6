// SPDX-License-Identifier: GPL-2.0
/*
 * nr-xfer: move a known byte pattern over TCP or UDP and check it arrived.
 *
 *   nr-xfer recv tcp|udp PORT BYTES [TIMEOUT_S [mark|nomark [RCVBUF]]]
 *   nr-xfer send tcp|udp ADDR PORT BYTES [CHUNK [HOLES]]
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
 *
 * HOLES (TCP over IPv4, 1 to 9) makes the sender misbehave on purpose: once
 * connected it waits for SIGUSR1 (the receiver has marked its socket), then
 * sends HOLES segments of its stream ahead of time, out of order, through
 * a raw socket: 1000 bytes each at offsets 500, 2000, 3500, ..., all
 * within the receiver's initial window (10 segments), each with a hole of
 * 500 bytes before it, 20 ms apart.  It sends the stream as usual at a
 * second SIGUSR1, so that a test can count what the early segments did
 * first.  The receiver sees a stream whose earlier segments were lost on
 * the way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "../common/inet_csum.h"

#ifndef SO_MEMALLOC
#define SO_MEMALLOC 76	/* until the system headers have it */
#endif

#define CHUNK 1400
/* Out-of-order segments: where the first starts, their length, stride. */
#define HOLE_FIRST 500
#define HOLE_LEN 1000
#define HOLE_STRIDE 1500
#define HOLES_MAX 9
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

/* The connection's next sequence numbers, each way, read in repair mode. */
static int tcp_queue_seq(int fd, int queue, unsigned int *seq)
{
	socklen_t len = sizeof(*seq);

	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &queue, sizeof(queue)))
		return -1;
	return getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, seq, &len);
}

/*
 * Send @holes segments of the stream that @fd (connected over IPv4, nothing
 * sent yet) is about to send, out of order, each behind a hole.
 */
static int send_holes(int fd, int holes)
{
	int on = 1, off = 0, no_probe = -1, raw, k;
	struct sockaddr_in local, peer;
	socklen_t len = sizeof(local);
	unsigned int snd_seq, rcv_seq;
	unsigned short sport;
	struct {
		struct tcphdr th;
		unsigned char data[HOLE_LEN];
	} seg;
	struct {
		struct in_addr src, dst;
		unsigned char zero, proto;
		unsigned short len;
	} pseudo;
	unsigned long i, start;

	if (getsockname(fd, (struct sockaddr *)&local, &len) || local.sin_family != AF_INET)
		return die("getsockname (holes need IPv4)");
	len = sizeof(peer);
	if (getpeername(fd, (struct sockaddr *)&peer, &len))
		return die("getpeername");
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &on, sizeof(on)) ||
	    tcp_queue_seq(fd, TCP_SEND_QUEUE, &snd_seq) ||
	    tcp_queue_seq(fd, TCP_RECV_QUEUE, &rcv_seq))
		return die("TCP_REPAIR");
	/* Leave repair mode without the window probe it would send. */
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &no_probe, sizeof(no_probe)))
		(void)setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off));

	raw = socket(AF_INET, SOCK_RAW, IPPROTO_TCP);
	if (raw < 0)
		return die("raw socket");
	sport = local.sin_port;
	local.sin_port = 0;
	if (bind(raw, (struct sockaddr *)&local, sizeof(local)))
		return die("bind raw socket");
	for (k = 0; k < holes; k++) {
		start = HOLE_FIRST + (unsigned long)k * HOLE_STRIDE;
		memset(&seg, 0, sizeof(seg));
		seg.th.source = sport;
		seg.th.dest = peer.sin_port;
		seg.th.seq = htonl(snd_seq + start);
		seg.th.ack_seq = htonl(rcv_seq);
		seg.th.doff = sizeof(seg.th) / 4;
		seg.th.ack = 1;
		seg.th.psh = 1;
		seg.th.window = htons(65535);
		for (i = 0; i < HOLE_LEN; i++)
			seg.data[i] = pattern_at(start + i);
		pseudo.src = local.sin_addr;
		pseudo.dst = peer.sin_addr;
		pseudo.zero = 0;
		pseudo.proto = IPPROTO_TCP;
		pseudo.len = htons(sizeof(seg));
		seg.th.check = csum_fold(csum_add(csum_add(0, &pseudo, sizeof(pseudo)),
						  &seg, sizeof(seg)));
		if (sendto(raw, &seg, sizeof(seg), 0, (struct sockaddr *)&peer,
			   sizeof(peer)) != sizeof(seg))
			return die("send out of order");
		usleep(20000);
	}
	close(raw);
	printf("sent %d segments out of order\n", holes);
	fflush(stdout);
	return 0;
}

static int do_send(int tcp, const char *host, const char *port,
		   unsigned long want, unsigned long chunk, int holes)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	unsigned long off = 0, i, len;
	static unsigned char buf[CHUNK_MAX];
	struct sockaddr *sa;
	socklen_t salen;
	sigset_t go;
	int fd, sig;

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
	if (holes) {
		sigemptyset(&go);
		sigaddset(&go, SIGUSR1);
		sigprocmask(SIG_BLOCK, &go, NULL);
	}
	fd = socket(sa->sa_family, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0)
		return die("socket");
	if (connect(fd, sa, salen))
		return die("connect");
	if (holes) {
		if (sigwait(&go, &sig))
			return die("sigwait");
		if (send_holes(fd, holes))
			return 1;
		if (sigwait(&go, &sig))
			return die("sigwait");
	}
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
	if (!strcmp(argv[1], "send") && argc >= 6 && argc <= 8) {
		unsigned long chunk = argc >= 7 ? strtoul(argv[6], NULL, 0) : CHUNK;
		unsigned long bytes = strtoul(argv[5], NULL, 0);
		int holes = argc == 8 ? atoi(argv[7]) : 0;

		if (chunk < 8 || chunk > CHUNK_MAX) {
			fprintf(stderr, "nr-xfer: CHUNK must be 8 to %d bytes\n", CHUNK_MAX);
			return 2;
		}
		if (argc == 8 && (!tcp || holes < 1 || holes > HOLES_MAX ||
				  bytes < HOLE_FIRST + (unsigned long)holes * HOLE_STRIDE)) {
			fprintf(stderr, "nr-xfer: HOLES must be 1 to %d, over TCP, within BYTES\n",
				HOLES_MAX);
			return 2;
		}
		return do_send(tcp, argv[3], argv[4], bytes, chunk, holes);
	}
usage:
	fprintf(stderr, "usage: nr-xfer recv tcp|udp PORT BYTES [TIMEOUT_S [mark|nomark [RCVBUF]]]\n"
			"       nr-xfer send tcp|udp ADDR PORT BYTES [CHUNK [HOLES]]\n");
	return 2;
}
