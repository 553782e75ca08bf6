// SPDX-License-Identifier: GPL-2.0
/* netreserve: parsing and output formatting. */
#include "nr_format.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>

/* A decimal number, nothing else: no sign, no spaces, no trailing text. */
static int parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int nr_parse_u32(const char *s, uint32_t *out)
{
	unsigned long v;
	int err = parse_ulong(s, UINT32_MAX, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

int nr_parse_pid(const char *s, int *out)
{
	unsigned long v;
	int err = parse_ulong(s, INT_MAX, &v);

	if (err || v == 0)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

int nr_parse_fd(const char *s, int *out)
{
	unsigned long v;
	int err = parse_ulong(s, INT_MAX, &v);

	if (err)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

enum nr_exit nr_exit_for_errno(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return NR_EXIT_OK;
	case ENODEV:
		return NR_EXIT_NODEV;
	case EOPNOTSUPP:
		return NR_EXIT_NOTSUPP;
	case EPERM:
	case EACCES:
		return NR_EXIT_PERM;
	case ESRCH:
		return NR_EXIT_NOPROC;
	case ENOTSOCK:
		return NR_EXIT_NOTSOCK;
	case EBADF:
		return NR_EXIT_BADFD;
	case ENOPROTOOPT:
		return NR_EXIT_NOFEATURE;
	case ERANGE:
	case ENOSPC:
		return NR_EXIT_RANGE;
	default:
		return NR_EXIT_ERROR;
	}
}

/* The sum a device line and the total line share. */
static void add_dev(struct nr_dev *sum, const struct nr_dev *d)
{
	sum->rx_reserve += d->rx_reserve;
	sum->pages += d->pages;
	sum->held += d->held;
	sum->peak += d->peak;
	sum->alloc += d->alloc;
	sum->refused += d->refused;
	sum->dropped += d->dropped;
	sum->delivered += d->delivered;
	sum->share += d->share;
	sum->buffers += d->buffers;
}

static void print_row_text(FILE *f, const char *name, const struct nr_dev *d)
{
	fprintf(f, "%-16s %10" PRIu32 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
		" %8" PRIu64 " %8" PRIu64 " %10" PRIu64 " %10" PRIu64
		" %10" PRIu64 " %10" PRIu64 "\n",
		name, d->rx_reserve, d->share, d->buffers, d->pages, d->held,
		d->peak, d->alloc, d->refused, d->dropped, d->delivered);
}

/* A value the kernel did not give prints as "?" rather than a made-up 0. */
static void print_kb(FILE *f, const char *label, long kb)
{
	if (kb < 0)
		fprintf(f, "%s ?", label);
	else
		fprintf(f, "%s %ld kB", label, kb);
}

long nr_effective_min_free(const struct nr_global *g)
{
	if (g->min_free_kbytes < 0 || g->memalloc_reserve_kbytes < 0)
		return -1;
	return g->min_free_kbytes + g->memalloc_reserve_kbytes;
}

void nr_print_text(FILE *f, const struct nr_dev *devs, int n,
		   const struct nr_global *g)
{
	struct nr_dev total = { .rx_reserve = 0 };
	int i;

	fprintf(f, "%-16s %10s %8s %8s %8s %8s %8s %10s %10s %10s %10s\n",
		"device", "rx_reserve", "share", "buffers", "pages", "held",
		"peak", "alloc", "refused", "dropped", "delivered");
	for (i = 0; i < n; i++) {
		if (!devs[i].supported)
			continue;
		print_row_text(f, devs[i].name, &devs[i]);
		add_dev(&total, &devs[i]);
	}
	print_row_text(f, "total", &total);
	print_kb(f, "min_free_kbytes:", nr_effective_min_free(g));
	print_kb(f, " = user", g->min_free_kbytes);
	print_kb(f, " + network", g->memalloc_reserve_kbytes);
	print_kb(f, "; cap on the network's part", g->rx_reserve_max_kbytes);
	fputc('\n', f);
}

/* A JSON string: interface names may hold quotes and backslashes. */
static void print_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* The counters, named as `ip -s -d -j link show` names them. */
static void print_stats_json(FILE *f, const struct nr_dev *d)
{
	fprintf(f, "\"rx_reserve\":%" PRIu32 ",\"rx_reserve_stats\":{"
		"\"pages\":%" PRIu64 ",\"held\":%" PRIu64 ",\"peak\":%" PRIu64
		",\"alloc\":%" PRIu64 ",\"refused\":%" PRIu64
		",\"dropped\":%" PRIu64 ",\"delivered\":%" PRIu64
		",\"share\":%" PRIu64 ",\"buffers\":%" PRIu64 "}",
		d->rx_reserve, d->pages, d->held, d->peak, d->alloc,
		d->refused, d->dropped, d->delivered, d->share, d->buffers);
}

/* JSON has no "unknown" number: a value the kernel did not give is null. */
static void print_long_json(FILE *f, const char *key, long v, const char *sep)
{
	if (v < 0)
		fprintf(f, "\"%s\":null%s", key, sep);
	else
		fprintf(f, "\"%s\":%ld%s", key, v, sep);
}

void nr_print_json(FILE *f, const struct nr_dev *devs, int n,
		   const struct nr_global *g)
{
	struct nr_dev total = { .rx_reserve = 0 };
	const char *sep = "";
	int i;

	fprintf(f, "{\"devices\":[");
	for (i = 0; i < n; i++) {
		const struct nr_dev *d = &devs[i];

		if (!d->supported)
			continue;
		fprintf(f, "%s{\"ifindex\":%d,\"ifname\":", sep, d->ifindex);
		print_json_string(f, d->name);
		fputc(',', f);
		print_stats_json(f, d);
		fputc('}', f);
		add_dev(&total, d);
		sep = ",";
	}
	fprintf(f, "],\"total\":{");
	print_stats_json(f, &total);
	fprintf(f, "},\"global\":{");
	print_long_json(f, "min_free_kbytes", nr_effective_min_free(g), ",");
	print_long_json(f, "user_min_free_kbytes", g->min_free_kbytes, ",");
	print_long_json(f, "memalloc_reserve_kbytes", g->memalloc_reserve_kbytes, ",");
	print_long_json(f, "rx_reserve_max_kbytes", g->rx_reserve_max_kbytes, "");
	fprintf(f, "}}\n");
}
