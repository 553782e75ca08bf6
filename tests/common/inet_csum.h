/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Internet checksum (RFC 1071), for the test programs that build IP and
 * TCP headers by hand: nr-hostflood on the host, nr-xfer in the guest.
 */
#ifndef NR_INET_CSUM_H
#define NR_INET_CSUM_H

#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>

/* Add @len bytes at @data to @sum, bytewise so that alignment never matters. */
static inline uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (; len > 1; p += 2, len -= 2)
		sum += p[0] << 8 | p[1];
	if (len)
		sum += p[0] << 8;
	return sum;
}

/* The checksum field's value, in network byte order. */
static inline uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons(~sum & 0xffff);
}

#endif
