// SPDX-License-Identifier: GPL-2.0
/*
 * nr-json: the guest has no python or jq.  Reads one JSON document on stdin,
 * checks it is valid JSON (RFC 8259, nothing after it but whitespace) and
 * prints every scalar as PATH=VALUE, one per line, so a shell test can grep:
 *
 *   {"devices":[{"ifname":"eth0","held":0}]}
 *   .devices[0].ifname=eth0
 *   .devices[0].held=0
 *
 * Strings print unquoted with escapes kept as written.  Invalid input: a
 * message naming the byte offset on stderr, exit 1.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *text;
static size_t pos, size;
static char path[4096];

static void fail(const char *why)
{
	fprintf(stderr, "nr-json: invalid JSON at byte %zu: %s\n", pos, why);
	exit(1);
}

static void skip_ws(void)
{
	while (pos < size && strchr(" \t\r\n", text[pos]))
		pos++;
}

static int peek(void)
{
	skip_ws();
	return pos < size ? (unsigned char)text[pos] : -1;
}

static void expect(char c)
{
	if (peek() != c)
		fail("unexpected character");
	pos++;
}

/* A string's body, escapes validated; returns its start and sets *len. */
static const char *string_body(size_t *len)
{
	size_t start;

	expect('"');
	start = pos;
	while (pos < size && text[pos] != '"') {
		unsigned char c = (unsigned char)text[pos];

		if (c < 0x20)
			fail("control character in string");
		if (c == '\\') {
			pos++;
			if (pos >= size)
				break;
			if (text[pos] == 'u') {
				int i;

				for (i = 1; i <= 4; i++)
					if (pos + i >= size || !isxdigit((unsigned char)text[pos + i]))
						fail("bad \\u escape");
				pos += 4;
			} else if (!strchr("\"\\/bfnrt", text[pos])) {
				fail("bad escape");
			}
		}
		pos++;
	}
	if (pos >= size)
		fail("unterminated string");
	*len = pos - start;
	pos++;
	return text + start;
}

static void print_scalar(const char *value, size_t len)
{
	printf("%s=%.*s\n", path, (int)len, value);
}

static void number(void)
{
	size_t start = pos;

	if (text[pos] == '-')
		pos++;
	if (pos < size && text[pos] == '0')
		pos++;
	else if (pos < size && isdigit((unsigned char)text[pos]))
		while (pos < size && isdigit((unsigned char)text[pos]))
			pos++;
	else
		fail("bad number");
	if (pos < size && text[pos] == '.') {
		pos++;
		if (pos >= size || !isdigit((unsigned char)text[pos]))
			fail("bad fraction");
		while (pos < size && isdigit((unsigned char)text[pos]))
			pos++;
	}
	if (pos < size && (text[pos] == 'e' || text[pos] == 'E')) {
		pos++;
		if (pos < size && (text[pos] == '+' || text[pos] == '-'))
			pos++;
		if (pos >= size || !isdigit((unsigned char)text[pos]))
			fail("bad exponent");
		while (pos < size && isdigit((unsigned char)text[pos]))
			pos++;
	}
	print_scalar(text + start, pos - start);
}

static void value(int depth);

/* Extend the path by a member or an index, parse, and restore it. */
static void nested(const char *fmt, const char *name, size_t len, long index, int depth)
{
	size_t keep = strlen(path);
	int n;

	if (name)
		n = snprintf(path + keep, sizeof(path) - keep, fmt, (int)len, name);
	else
		n = snprintf(path + keep, sizeof(path) - keep, fmt, index);
	if (n < 0 || (size_t)n >= sizeof(path) - keep)
		fail("nested too deep");
	value(depth + 1);
	path[keep] = '\0';
}

static void value(int depth)
{
	int c = peek();
	size_t len;

	if (depth > 64)
		fail("nested too deep");
	if (c == '{') {
		pos++;
		if (peek() == '}') {
			pos++;
			return;
		}
		do {
			const char *name = string_body(&len);

			expect(':');
			nested(".%.*s", name, len, 0, depth);
		} while (peek() == ',' && ++pos);
		expect('}');
	} else if (c == '[') {
		long i = 0;

		pos++;
		if (peek() == ']') {
			pos++;
			return;
		}
		do
			nested("[%ld]", NULL, 0, i++, depth);
		while (peek() == ',' && ++pos);
		expect(']');
	} else if (c == '"') {
		const char *s = string_body(&len);

		print_scalar(s, len);
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		number();
	} else {
		static const char *const words[] = { "true", "false", "null" };
		size_t i;

		for (i = 0; i < 3; i++) {
			len = strlen(words[i]);
			if (size - pos >= len && !memcmp(text + pos, words[i], len)) {
				print_scalar(text + pos, len);
				pos += len;
				return;
			}
		}
		fail("unexpected character");
	}
}

int main(void)
{
	size_t cap = 1 << 16;

	text = malloc(cap);
	while (text) {
		size_t n = fread(text + size, 1, cap - size, stdin);

		size += n;
		if (size < cap)
			break;
		cap *= 2;
		text = realloc(text, cap);
	}
	if (!text)
		return 1;
	value(0);
	if (peek() != -1)
		fail("text after the document");
	return 0;
}
