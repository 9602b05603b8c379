/* The database servers a connection may use. See hosts.h. */
#include "hosts.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

static int parse_one(const char *s, size_t len, unsigned default_port, struct host_port *out)
{
	const char *end = s + len, *name = s, *port = NULL;
	size_t name_len;
	int64_t p;
	char num[8];

	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close)
			return -EINVAL;
		name = s + 1;
		name_len = (size_t)(close - name);
		if (close + 1 < end) {
			if (close[1] != ':')
				return -EINVAL;
			port = close + 2;
		}
	} else {
		const char *colon = memchr(s, ':', len);
		/* Two colons or more: an IPv6 address, which has no room for
		 * a port unless it is in brackets. */
		if (colon && !memchr(colon + 1, ':', (size_t)(end - colon - 1)))
			port = colon + 1;
		name_len = port ? (size_t)(colon - s) : len;
	}
	if (name_len == 0 || name_len >= sizeof(out->name))
		return -EINVAL;
	memcpy(out->name, name, name_len);
	out->name[name_len] = '\0';
	out->port = default_port;
	if (port) {
		size_t pl = (size_t)(end - port);
		if (pl == 0 || pl >= sizeof(num))
			return -EINVAL;
		memcpy(num, port, pl);
		num[pl] = '\0';
		if (parse_i64(num, 1, 65535, &p) < 0)
			return -EINVAL;
		out->port = (unsigned)p;
	}
	return 0;
}

int hosts_parse(const char *list, unsigned default_port, struct host_port *out, int max, int *n)
{
	const char *p = list ? list : "";

	*n = 0;
	while (*p) {
		const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
		const char *a = p, *b = end;
		int rc;

		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (a == b)
			return -EINVAL;
		if (*n >= max)
			return -E2BIG;
		rc = parse_one(a, (size_t)(b - a), default_port, &out[*n]);
		if (rc < 0)
			return rc;
		(*n)++;
		if (!comma)
			break;
		p = comma + 1;
		if (!*p)
			return -EINVAL; /* a trailing comma: an empty last entry */
	}
	return 0;
}
