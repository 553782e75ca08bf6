/* SPDX-License-Identifier: GPL-2.0 */
/* netreserve: parsing and output formatting, kept apart to be unit-tested. */
#ifndef NR_FORMAT_H
#define NR_FORMAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes: each failure a user may want to tell apart has its own. */
enum nr_exit {
	NR_EXIT_OK = 0,
	NR_EXIT_ERROR = 1,	/* anything else */
	NR_EXIT_USAGE = 2,	/* bad command line (including a malformed pid or fd) */
	NR_EXIT_NODEV = 3,	/* no such device */
	NR_EXIT_NOTSUPP = 4,	/* device without RX reserve support */
	NR_EXIT_PERM = 5,	/* permission denied */
	NR_EXIT_NOPROC = 6,	/* no such process (or it is gone) */
	NR_EXIT_NOTSOCK = 7,	/* not a socket SO_MEMALLOC takes */
	NR_EXIT_BADFD = 8,	/* the process has no such fd */
	NR_EXIT_NOFEATURE = 9,	/* the kernel has no RX reserve / SO_MEMALLOC */
	NR_EXIT_RANGE = 10,	/* value refused as too large (device or global cap) */
	NR_EXIT_EXITED = 11,	/* the process has exited but is not reaped yet */
};

struct nr_dev {
	char name[32];
	int ifindex;
	bool supported;
	uint32_t rx_reserve;
	uint64_t pages, held, peak, alloc, refused, dropped, delivered;
	uint64_t share;	/* rx_reserve, or less if the cap did not allow it */
	uint64_t buffers; /* share in buffers, and what the driver holds back */
};

/* vm.min_free_kbytes reads back the user's part; the network's is apart. */
struct nr_global {
	long min_free_kbytes;		/* the user's (or boot) part; -1 unknown */
	long memalloc_reserve_kbytes;	/* the network's part; -1 unknown */
	long rx_reserve_max_kbytes;	/* the cap; -1 unknown */
};

int nr_parse_u32(const char *s, uint32_t *out);
int nr_parse_pid(const char *s, int *out);
int nr_parse_fd(const char *s, int *out);
enum nr_exit nr_exit_for_errno(int err);
long nr_effective_min_free(const struct nr_global *g);
void nr_print_text(FILE *f, const struct nr_dev *devs, int n,
		   const struct nr_global *g);
void nr_print_json(FILE *f, const struct nr_dev *devs, int n,
		   const struct nr_global *g);

#endif
