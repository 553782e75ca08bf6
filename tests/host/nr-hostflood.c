// SPDX-License-Identifier: GPL-2.0
/*
 * nr-hostflood: flood a QEMU guest's NIC with frames at host speed.
 *
 *   nr-hostflood -p PORT|-i TAP -d DST_MAC -s SRC_MAC -D DST_IP -S SRC_IP
 *                [-r PPS] [-t SECONDS] [-j THREADS] [-m MIX] [-l LEN]
 *                [-P IDLE_PORT] [-X MOD:RES] [-o STATSFILE]
 *
 * QEMU's "-netdev socket,udp=127.0.0.1:A,localaddr=127.0.0.1:B" backend
 * takes every UDP datagram that arrives on 127.0.0.1:B as one raw Ethernet
 * frame (no length prefix, no FCS) and hands it to the guest NIC.  So we
 * build Ethernet/IPv4 frames ourselves and send each as one datagram to
 * 127.0.0.1:PORT, with sendmmsg in batches, paced to PPS frames a second
 * in total over THREADS senders, for at most SECONDS (or until SIGTERM or
 * SIGINT).  MIX picks the kinds of frames, round robin:
 *
 *   udp-idle    UDP to IDLE_PORT, where the guest has a socket that never
 *               reads, so the datagrams pile up in its receive queue
 *   udp-closed  UDP to a random closed port in 20000-29999 (with -X, never
 *               one that leaves RES divided by MOD)
 *   syn         TCP SYN to port 10810 from a random port, random sequence
 *   frag        the first fragment (MF set) of a UDP datagram whose rest
 *               never comes, so it waits in the reassembly queue
 *
 * Every second one line "t=SEC offered=N pps=N" (frames sent in that
 * second, and that over the second's exact length), at the end one line
 * "total offered=N seconds=S avg_pps=N", to STATSFILE (appended) or stdout.
 * "Offered" means sendmmsg took them: whether QEMU read them and the guest
 * NIC accepted them is for the guest's counters to say.
 *
 * SAFETY RULE: the datagrams only ever go to 127.0.0.1, which is hard-coded
 * (only the port is a parameter), on a connected socket.  Nothing here can
 * send to a real network; the MACs and IPs inside the frames are virtual.
 *
 * With -i instead of -p, the frames are written to a tap device through a
 * packet socket bound to it, for QEMU's multi-queue tap backend (the
 * socket backend has one queue).  A frame sent on a tap goes to the one
 * process that holds the tap, QEMU, and nowhere else; nr-hostflood refuses
 * any device that is not a tun/tap, and boot.sh creates the tap in a
 * network namespace of its own that has no other device.
 *
 * The pressure test (scripts/flooded-pair.sh) starts it on the host when
 * the client guest, swapping over NBD, prints "nr-flood-go", aimed at the
 * loopback port QEMU takes that NIC's frames on (its -netdev socket
 * localaddr), and stops it with SIGTERM at "nr-flood-stop": traffic no
 * memalloc socket wants, faster than a guest could send it, to show that
 * the rx reserve keeps the swap traffic going under that load.  The stats
 * lines (-o) go into the run's flood log.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../common/inet_csum.h"

#define NSEC_PER_SEC	1000000000LL
#define BATCH		64		/* frames per sendmmsg */
#define MIN_IP_LEN	28		/* IPv4 + UDP header */
#define MAX_IP_LEN	9000		/* jumbo frames on an MTU 9000 link */
#define MAX_RATE	100000000UL	/* keeps the pacing arithmetic in 64 bits */
#define MAX_THREADS	64
#define MAX_MIX		32
#define SYN_PORT	10810
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/*
 * Each frame sits 2 bytes into its slot so that the IP header after the
 * 14-byte Ethernet header is 4-byte aligned (the kernel's NET_IP_ALIGN
 * trick): the header structs below are then accessed at their alignment.
 */
#define FRAME_OFFSET	2
#define SLOT_SIZE	(FRAME_OFFSET + ETH_HLEN + MAX_IP_LEN)

enum frame_kind { UDP_IDLE, UDP_CLOSED, SYN, FRAG };

static const char *const kind_names[] = {
	[UDP_IDLE] = "udp-idle",
	[UDP_CLOSED] = "udp-closed",
	[SYN] = "syn",
	[FRAG] = "frag",
};

struct config {
	unsigned int port, idle_port, ip_len, threads, seconds;
	unsigned int skip_mod, skip_res;
	const char *tap;
	unsigned long rate;
	uint8_t dst_mac[ETH_ALEN], src_mac[ETH_ALEN];
	struct in_addr dst_ip, src_ip;
	enum frame_kind mix[MAX_MIX];
	unsigned int mix_len;
	const char *stats_path;
};

/* What the senders and the stats loop share. */
struct flood {
	const struct config *cfg;
	int64_t deadline;		/* CLOCK_MONOTONIC ns */
	atomic_ullong sent, refused, nobufs;
	atomic_bool failed;
};

struct sender {
	struct flood *flood;
	pthread_t thread;
	int fd;
	unsigned long rate;		/* frames a second, 0: no limit */
	uint64_t rng;
	unsigned long next_kind;
	uint8_t *slots;
	struct iovec iov[BATCH];
	struct mmsghdr msgs[BATCH];
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: nr-hostflood -p PORT|-i TAP -d DST_MAC -s SRC_MAC -D DST_IP -S SRC_IP [-r PPS] [-t SECONDS] [-j THREADS] [-m MIX] [-l LEN] [-P IDLE_PORT] [-X MOD:RES] [-o STATSFILE]\n");
	exit(2);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	nanosleep(&ts, NULL);
}

/* xorshift64: cheap, and plenty to make every frame a distinct flow. */
static uint32_t random32(struct sender *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng >> 32;
}

/*
 * A random closed port, not one -X excludes: a steering program on the tap
 * (nr-tapsteer) picks the guest's RX queue from the destination port, so
 * the flood can keep off the queue a test wants for other traffic.
 */
static unsigned int closed_port(struct sender *s)
{
	const struct config *cfg = s->flood->cfg;
	unsigned int port;

	do
		port = 20000 + random32(s) % 10000;
	while (cfg->skip_mod && port % cfg->skip_mod == cfg->skip_res);
	return port;
}

/*
 * Writes the headers of one frame of the given kind at frame and returns
 * the frame's length.  The payload bytes stay zero from calloc.
 */
static size_t build_frame(struct sender *s, uint8_t *frame, enum frame_kind kind)
{
	const struct config *cfg = s->flood->cfg;
	struct ethhdr *eth = (struct ethhdr *)frame;
	struct iphdr *ip = (struct iphdr *)(eth + 1);
	struct udphdr *udp = (struct udphdr *)(ip + 1);
	struct tcphdr *tcp = (struct tcphdr *)(ip + 1);
	unsigned int ip_len = cfg->ip_len;
	size_t len;

	memcpy(eth->h_dest, cfg->dst_mac, ETH_ALEN);
	memcpy(eth->h_source, cfg->src_mac, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);

	*ip = (struct iphdr){
		.version = 4,
		.ihl = sizeof(*ip) / 4,
		.id = htons(random32(s) & 0xffff),
		.ttl = 64,
		.protocol = IPPROTO_UDP,
		.saddr = cfg->src_ip.s_addr,
		.daddr = cfg->dst_ip.s_addr,
	};

	switch (kind) {
	case UDP_IDLE:
	case UDP_CLOSED:
	case FRAG:
		*udp = (struct udphdr){
			.source = htons(1024 + random32(s) % 64512),
			.dest = htons(kind == UDP_CLOSED ? closed_port(s) :
				      cfg->idle_port),
			.len = htons(ip_len - sizeof(*ip)),
		};
		if (kind == FRAG) {
			/*
			 * Say the datagram is twice what this fragment
			 * carries: its second half never comes.  The kernel
			 * queues a first fragment whose length is not a
			 * multiple of 8 too (it trims the end), so -l stays
			 * exact here as well.
			 */
			ip->frag_off = htons(IP_MF);
			udp->len = htons(2 * (ip_len - sizeof(*ip)));
		}
		break;
	case SYN:
		ip_len = sizeof(*ip) + sizeof(*tcp);
		ip->protocol = IPPROTO_TCP;
		*tcp = (struct tcphdr){
			.source = htons(1024 + random32(s) % 64512),
			.dest = htons(SYN_PORT),
			.seq = htonl(random32(s)),
			.doff = sizeof(*tcp) / 4,
			.syn = 1,
			.window = htons(64240),
		};
		/* Pseudo header: addresses, protocol, TCP length. */
		tcp->check = csum_fold(csum_add(IPPROTO_TCP + sizeof(*tcp),
						&ip->saddr, 8) +
				       csum_add(0, tcp, sizeof(*tcp)));
		break;
	}
	ip->tot_len = htons(ip_len);
	ip->check = csum_fold(csum_add(0, ip, sizeof(*ip)));

	/* Pad to the Ethernet minimum as a real wire would; IP ignores it. */
	len = ETH_HLEN + ip_len;
	return len < ETH_ZLEN ? ETH_ZLEN : len;
}

/* New ports, IDs and sequence numbers for the next n frames. */
static void fill_batch(struct sender *s, unsigned int n)
{
	const struct config *cfg = s->flood->cfg;

	for (unsigned int i = 0; i < n; i++) {
		enum frame_kind kind = cfg->mix[s->next_kind++ % cfg->mix_len];

		s->iov[i].iov_len = build_frame(s, s->iov[i].iov_base, kind);
	}
}

/*
 * Pauses briefly and returns true if sendmmsg's error is worth a retry: a
 * full socket buffer, or nobody listening yet (QEMU not started: the ICMP
 * port unreachable comes back as ECONNREFUSED on the next send; a tap that
 * is down).
 */
static bool pause_to_retry(struct sender *s, int err)
{
	switch (err) {
	case EINTR:
		return true;
	case ECONNREFUSED:
	case ENETDOWN:	/* the tap is not up yet */
		atomic_fetch_add(&s->flood->refused, 1);
		sleep_ns(NSEC_PER_SEC / 1000);
		return true;
	case ENOBUFS:
	case EAGAIN:
		atomic_fetch_add(&s->flood->nobufs, 1);
		sleep_ns(50000);
		return true;
	}
	fprintf(stderr, "nr-hostflood: sendmmsg: %s\n", strerror(err));
	return false;
}

/*
 * Token bucket: credit grows by rate frames a second (kept in frames times
 * NSEC_PER_SEC to stay in integers) and is capped, so that a stall does not
 * turn into a burst afterwards.  Batches are sized to about a millisecond
 * of frames, so low rates go out smoothly rather than 64 at a time.
 */
static void *sender_main(void *arg)
{
	struct sender *s = arg;
	struct flood *flood = s->flood;
	unsigned long rate = s->rate;
	unsigned long want = rate / 1000 < 1 ? 1 :
			     rate / 1000 > BATCH ? BATCH : rate / 1000;
	unsigned long cap = rate / 100 > 2 * BATCH ? rate / 100 : 2 * BATCH;
	/* Start with one batch's worth: the first frames go out at once. */
	int64_t credit = want * NSEC_PER_SEC, last = now_ns(), now;

	while (!stop && !atomic_load(&flood->failed) &&
	       (now = now_ns()) < flood->deadline) {
		unsigned int n = BATCH;
		int sent;

		if (rate) {
			int64_t elapsed = now - last;

			last = now;
			if (elapsed > NSEC_PER_SEC)
				elapsed = NSEC_PER_SEC;
			credit += elapsed * (int64_t)rate;
			if (credit > (int64_t)cap * NSEC_PER_SEC)
				credit = (int64_t)cap * NSEC_PER_SEC;
			if (credit < (int64_t)want * NSEC_PER_SEC) {
				int64_t wait = ((int64_t)want * NSEC_PER_SEC -
						credit) / rate + 1;

				/* Short enough to notice stop and deadline. */
				sleep_ns(wait < 10000000 ? wait : 10000000);
				continue;
			}
			n = credit / NSEC_PER_SEC < BATCH ? credit / NSEC_PER_SEC : BATCH;
		}
		fill_batch(s, n);
		sent = sendmmsg(s->fd, s->msgs, n, MSG_DONTWAIT);
		if (sent < 0) {
			if (!pause_to_retry(s, errno))
				atomic_store(&flood->failed, true);
			continue;
		}
		credit -= sent * NSEC_PER_SEC;
		atomic_fetch_add(&flood->sent, sent);
	}
	return NULL;
}

/* The only destination there is: 127.0.0.1, where QEMU listens. */
static int open_qemu_socket(unsigned int port)
{
	struct sockaddr_in qemu = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&qemu, sizeof(qemu))) {
		fprintf(stderr, "nr-hostflood: socket to 127.0.0.1:%u: %s\n",
			port, strerror(errno));
		exit(1);
	}
	return fd;
}

/*
 * A packet socket bound to a tap device, sending only (protocol 0: it
 * receives nothing).  Refuses a device that is not a tun/tap: only a tap
 * hands what is sent on it to a single process (QEMU) and no wire.
 */
static int open_tap_socket(const char *tap)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct sockaddr_ll ll = { .sll_family = AF_PACKET };
	struct ifreq ifr = { .ifr_data = (char *)&info };
	int fd;

	if (strlen(tap) >= IF_NAMESIZE) {
		fprintf(stderr, "nr-hostflood: %s: name too long\n", tap);
		exit(1);
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "nr-hostflood: packet socket: %s\n", strerror(errno));
		exit(1);
	}
	/* The driver's name, from the network namespace we are in. */
	strcpy(ifr.ifr_name, tap);
	if (ioctl(fd, SIOCETHTOOL, &ifr) || strcmp(info.driver, "tun")) {
		fprintf(stderr, "nr-hostflood: %s is not a tun/tap device\n", tap);
		exit(1);
	}
	ll.sll_ifindex = if_nametoindex(tap);
	if (!ll.sll_ifindex || bind(fd, (struct sockaddr *)&ll, sizeof(ll))) {
		fprintf(stderr, "nr-hostflood: packet socket on %s: %s\n", tap,
			strerror(errno));
		exit(1);
	}
	return fd;
}

static void init_sender(struct sender *s, struct flood *flood, unsigned int index)
{
	const struct config *cfg = flood->cfg;

	s->flood = flood;
	s->fd = cfg->tap ? open_tap_socket(cfg->tap) : open_qemu_socket(cfg->port);
	/* Split the rate evenly; the first threads take the remainder. */
	s->rate = cfg->rate / cfg->threads + (index < cfg->rate % cfg->threads);
	/* Distinct, never zero seeds (xorshift stays at zero). */
	s->rng = ((uint64_t)now_ns() ^ (uint64_t)getpid() << 32) +
		 (index + 1) * 0x9e3779b97f4a7c15ULL;
	if (!s->rng)
		s->rng = 1;
	s->slots = calloc(BATCH, SLOT_SIZE);
	if (!s->slots) {
		fprintf(stderr, "nr-hostflood: out of memory\n");
		exit(1);
	}
	for (unsigned int i = 0; i < BATCH; i++) {
		s->iov[i].iov_base = s->slots + i * SLOT_SIZE + FRAME_OFFSET;
		s->msgs[i].msg_hdr.msg_iov = &s->iov[i];
		s->msgs[i].msg_hdr.msg_iovlen = 1;
	}
}

static bool parse_number(const char *text, unsigned long min, unsigned long max,
			 unsigned long *value)
{
	char *end;

	if (*text < '0' || *text > '9')
		return false;
	errno = 0;
	*value = strtoul(text, &end, 10);
	return !errno && !*end && *value >= min && *value <= max;
}

static unsigned int number_or_usage(const char *text, unsigned long min,
				    unsigned long max)
{
	unsigned long value;

	if (!parse_number(text, min, max, &value))
		usage();
	return value;
}

static void parse_mac(const char *text, uint8_t *mac)
{
	int end = 0;

	if (strlen(text) != 17 ||
	    sscanf(text, "%2hhx:%2hhx:%2hhx:%2hhx:%2hhx:%2hhx%n", &mac[0], &mac[1],
		   &mac[2], &mac[3], &mac[4], &mac[5], &end) != 6 || end != 17)
		usage();
}

static void parse_mix(const char *text, struct config *cfg)
{
	char *copy = strdup(text), *name, *save;

	if (!copy)
		usage();
	cfg->mix_len = 0;
	for (name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		unsigned int kind = 0;

		while (kind < ARRAY_SIZE(kind_names) && strcmp(name, kind_names[kind]))
			kind++;
		if (kind == ARRAY_SIZE(kind_names) || cfg->mix_len == MAX_MIX)
			usage();
		cfg->mix[cfg->mix_len++] = kind;
	}
	free(copy);
	if (!cfg->mix_len)
		usage();
}

static void parse_args(int argc, char **argv, struct config *cfg)
{
	bool have_dmac = false, have_smac = false;
	int opt;

	*cfg = (struct config){
		.idle_port = 5001,
		.ip_len = 64,
		.threads = 1,
		.seconds = 600,
		.rate = 200000,
	};
	parse_mix("udp-idle,udp-closed,syn,frag", cfg);
	opterr = 0;	/* usage() says it all, in one line */
	while ((opt = getopt(argc, argv, "p:i:d:s:D:S:r:t:j:m:l:P:X:o:")) != -1) {
		switch (opt) {
		case 'p': cfg->port = number_or_usage(optarg, 1, 65535); break;
		case 'i': cfg->tap = optarg; break;
		case 'X':
			if (sscanf(optarg, "%u:%u", &cfg->skip_mod, &cfg->skip_res) != 2 ||
			    cfg->skip_mod < 2 || cfg->skip_res >= cfg->skip_mod)
				usage();
			break;
		case 'd': parse_mac(optarg, cfg->dst_mac); have_dmac = true; break;
		case 's': parse_mac(optarg, cfg->src_mac); have_smac = true; break;
		case 'D':
			if (inet_pton(AF_INET, optarg, &cfg->dst_ip) != 1)
				usage();
			break;
		case 'S':
			if (inet_pton(AF_INET, optarg, &cfg->src_ip) != 1)
				usage();
			break;
		case 'r':
			if (!parse_number(optarg, 0, MAX_RATE, &cfg->rate))
				usage();
			break;
		case 't': cfg->seconds = number_or_usage(optarg, 1, 86400); break;
		case 'j': cfg->threads = number_or_usage(optarg, 1, MAX_THREADS); break;
		case 'm': parse_mix(optarg, cfg); break;
		case 'l':
			cfg->ip_len = number_or_usage(optarg, MIN_IP_LEN, MAX_IP_LEN);
			break;
		case 'P': cfg->idle_port = number_or_usage(optarg, 1, 65535); break;
		case 'o': cfg->stats_path = optarg; break;
		default: usage();
		}
	}
	/* A thread with rate 0 would mean "no limit": each needs at least 1. */
	if (optind != argc || !cfg->port == !cfg->tap || !have_dmac || !have_smac ||
	    !cfg->dst_ip.s_addr || !cfg->src_ip.s_addr ||
	    (cfg->rate && cfg->rate < cfg->threads))
		usage();
}

static double seconds_between(int64_t from, int64_t to)
{
	return (double)(to - from) / NSEC_PER_SEC;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned long long total, reported = 0;
	struct flood flood = { 0 };
	int64_t start, tick_start;
	struct sender *senders;
	sigset_t block, old;
	struct config cfg;
	FILE *stats = stdout;
	double seconds;

	parse_args(argc, argv, &cfg);
	senders = calloc(cfg.threads, sizeof(*senders));
	if (!senders) {
		fprintf(stderr, "nr-hostflood: out of memory\n");
		return 1;
	}
	if (cfg.stats_path) {
		stats = fopen(cfg.stats_path, "a");
		if (!stats) {
			fprintf(stderr, "nr-hostflood: %s: %s\n", cfg.stats_path,
				strerror(errno));
			return 1;
		}
	}
	/* No SA_RESTART: the signal has to cut the stats loop's sleep short. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	flood.cfg = &cfg;
	start = now_ns();
	flood.deadline = start + cfg.seconds * NSEC_PER_SEC;
	/* Senders block the signals, so they always wake the stats loop. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (unsigned int i = 0; i < cfg.threads; i++) {
		init_sender(&senders[i], &flood, i);
		if (pthread_create(&senders[i].thread, NULL, sender_main, &senders[i])) {
			fprintf(stderr, "nr-hostflood: cannot start thread\n");
			return 1;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	tick_start = start;
	for (unsigned int sec = 1; sec <= cfg.seconds; sec++) {
		int64_t tick = start + sec * NSEC_PER_SEC, now;
		struct timespec ts = { .tv_sec = tick / NSEC_PER_SEC,
				       .tv_nsec = tick % NSEC_PER_SEC };

		while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
						&ts, NULL) == EINTR)
			;
		if (stop || atomic_load(&flood.failed))
			break;
		now = now_ns();
		total = atomic_load(&flood.sent);
		fprintf(stats, "t=%u offered=%llu pps=%.0f\n", sec, total - reported,
			(total - reported) / seconds_between(tick_start, now));
		fflush(stats);
		reported = total;
		tick_start = now;
	}

	for (unsigned int i = 0; i < cfg.threads; i++) {
		pthread_join(senders[i].thread, NULL);
		close(senders[i].fd);
		free(senders[i].slots);
	}
	free(senders);
	total = atomic_load(&flood.sent);
	seconds = seconds_between(start, now_ns());
	fprintf(stats, "total offered=%llu seconds=%.2f avg_pps=%.0f\n",
		total, seconds, total / seconds);
	fflush(stats);
	if (atomic_load(&flood.refused) || atomic_load(&flood.nobufs))
		fprintf(stderr, "nr-hostflood: send retries: refused=%llu nobufs=%llu\n",
			atomic_load(&flood.refused), atomic_load(&flood.nobufs));
	if (stats != stdout)
		fclose(stats);
	return atomic_load(&flood.failed) ? 1 : 0;
}
