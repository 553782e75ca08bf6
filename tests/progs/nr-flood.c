// SPDX-License-Identifier: GPL-2.0
/*
 * nr-flood: packets nobody with a memalloc socket wants, as fast as this
 * guest can send them.
 *
 *   nr-flood ADDR SECONDS [SIZE]
 *   nr-flood --frags ADDR COUNT
 *
 * Round robin, until SECONDS have passed: a UDP datagram of SIZE bytes
 * (default 1400) to ADDR port 9 (nobody bound), one to port 5001 (bound,
 * never read), and every 16th round a TCP connection attempt to port 5002
 * (nobody listening).  Prints what it sent.
 *
 * With --frags: COUNT lone first fragments of UDP datagrams to ADDR (raw
 * IPv4, MF set, offset 0, each with its own ID) whose rest never comes,
 * as a reassembly queue would hold them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int udp_to(const char *host, int port)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	inet_pton(AF_INET, host, &addr.sin_addr);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)))
		return -1;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

static void tcp_attempt(const char *host, int port)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return;
	inet_pton(AF_INET, host, &addr.sin_addr);
	connect(fd, (struct sockaddr *)&addr, sizeof(addr));	/* EINPROGRESS */
	close(fd);
}

static int send_lone_fragments(const char *host, unsigned long count)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	unsigned char packet[1024];
	struct iphdr *ip = (struct iphdr *)packet;
	struct udphdr *udp = (struct udphdr *)(ip + 1);
	unsigned long i, sent = 0;
	int fd;

	if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
		fprintf(stderr, "usage: nr-flood --frags ADDR COUNT\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);	/* IP_HDRINCL */
	if (fd < 0) {
		fprintf(stderr, "nr-flood: raw socket: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < count; i++) {
		memset(packet, 0, sizeof(packet));
		ip->version = 4;
		ip->ihl = 5;
		ip->tot_len = htons(sizeof(packet));
		ip->id = htons(i + 1);
		ip->frag_off = htons(IP_MF);	/* offset 0: the first of many */
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->daddr = addr.sin_addr.s_addr;	/* the kernel fills saddr, check */
		udp->source = htons(40000);
		udp->dest = htons(5003);
		udp->len = htons(4000);		/* the datagram the rest would make */
		sent += sendto(fd, packet, sizeof(packet), 0, (struct sockaddr *)&addr,
			       sizeof(addr)) == (ssize_t)sizeof(packet);
	}
	printf("nr-flood: sent %lu lone first fragments\n", sent);
	return sent == count ? 0 : 1;
}

int main(int argc, char **argv)
{
	static char buf[65000];
	unsigned long udp = 0, tcp = 0, round;
	struct in_addr check;
	time_t end;
	size_t size;
	int nobody, idle;

	if (argc == 4 && !strcmp(argv[1], "--frags"))
		return send_lone_fragments(argv[2], strtoul(argv[3], NULL, 0));
	if (argc < 3 || argc > 4 || inet_pton(AF_INET, argv[1], &check) != 1) {
		fprintf(stderr, "usage: nr-flood ADDR SECONDS [SIZE]\n");
		return 2;
	}
	size = argc == 4 ? strtoul(argv[3], NULL, 0) : 1400;
	if (size > sizeof(buf)) {
		fprintf(stderr, "nr-flood: SIZE is at most %zu\n", sizeof(buf));
		return 2;
	}
	nobody = udp_to(argv[1], 9);
	idle = udp_to(argv[1], 5001);
	if (nobody < 0 || idle < 0) {
		fprintf(stderr, "nr-flood: socket: %s\n", strerror(errno));
		return 1;
	}
	memset(buf, 0xa5, size);
	end = time(NULL) + atol(argv[2]);
	for (round = 0; time(NULL) < end; round++) {
		/* ECONNREFUSED from an ICMP unreachable, or a full queue: go on. */
		udp += send(nobody, buf, size, 0) == (ssize_t)size;
		udp += send(idle, buf, size, 0) == (ssize_t)size;
		if (round % 16 == 0) {
			tcp_attempt(argv[1], 5002);
			tcp++;
		}
	}
	printf("nr-flood: sent %lu UDP datagrams, %lu TCP connection attempts\n", udp, tcp);
	return 0;
}
