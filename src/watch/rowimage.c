/* The row images of the binary log's rows events, decoded as far as the
 * watcher needs. See rowimage.h. */
#include "rowimage.h"

#include <string.h>

/* The binary log's column type codes (the server's enum_field_types). */
enum {
	T_DECIMAL = 0,
	T_TINY = 1,
	T_SHORT = 2,
	T_LONG = 3,
	T_FLOAT = 4,
	T_DOUBLE = 5,
	T_NULL = 6,
	T_TIMESTAMP = 7,
	T_LONGLONG = 8,
	T_INT24 = 9,
	T_DATE = 10,
	T_TIME = 11,
	T_DATETIME = 12,
	T_YEAR = 13,
	T_NEWDATE = 14,
	T_VARCHAR = 15,
	T_BIT = 16,
	T_TIMESTAMP2 = 17,
	T_DATETIME2 = 18,
	T_TIME2 = 19,
	T_JSON = 245,
	T_NEWDECIMAL = 246,
	T_ENUM = 247,
	T_SET = 248,
	T_TINY_BLOB = 249,
	T_MEDIUM_BLOB = 250,
	T_LONG_BLOB = 251,
	T_BLOB = 252,
	T_VAR_STRING = 253,
	T_STRING = 254,
	T_GEOMETRY = 255,
};

/* Bytes of metadata a column of this type has in the table map. */
static int meta_bytes(uint8_t type)
{
	switch (type) {
	case T_FLOAT:
	case T_DOUBLE:
	case T_BLOB:
	case T_TINY_BLOB:
	case T_MEDIUM_BLOB:
	case T_LONG_BLOB:
	case T_GEOMETRY:
	case T_JSON:
	case T_TIMESTAMP2:
	case T_DATETIME2:
	case T_TIME2:
		return 1;
	case T_VARCHAR:
	case T_VAR_STRING:
	case T_STRING:
	case T_ENUM:
	case T_SET:
	case T_NEWDECIMAL:
	case T_BIT:
		return 2;
	default:
		return 0;
	}
}

int rowimage_table_init(struct rowimage_table *t, const uint8_t *types, uint32_t n_cols,
			const uint8_t *meta, size_t meta_len)
{
	size_t at = 0;

	memset(t, 0, sizeof(*t));
	if (n_cols > ROWIMAGE_MAX_COLS)
		return -1;
	t->n_cols = n_cols;
	for (uint32_t i = 0; i < n_cols; i++) {
		int n = meta_bytes(types[i]);
		t->types[i] = types[i];
		if (at + (size_t)n > meta_len)
			return -1;
		if (n == 1)
			t->meta[i] = meta[at];
		else if (n == 2 && (types[i] == T_VARCHAR || types[i] == T_VAR_STRING))
			t->meta[i] =
				(uint16_t)(meta[at] | meta[at + 1] << 8); /* little-endian length */
		else if (n == 2)
			t->meta[i] =
				(uint16_t)(meta[at] << 8 | meta[at + 1]); /* two bytes, in order */
		at += (size_t)n;
	}
	/* queue a VARCHAR, status an ENUM (logged as a STRING whose metadata
	 * names the real type), run_at a DATETIME(6). */
	t->is_jobs = n_cols > ROWIMAGE_COL_RUN_AT && t->types[ROWIMAGE_COL_QUEUE] == T_VARCHAR &&
		     t->types[ROWIMAGE_COL_STATUS] == T_STRING &&
		     (t->meta[ROWIMAGE_COL_STATUS] >> 8) == T_ENUM &&
		     t->types[ROWIMAGE_COL_RUN_AT] == T_DATETIME2;
	return 0;
}

static unsigned dig2bytes(unsigned d)
{
	static const unsigned b[10] = { 0, 1, 1, 2, 2, 3, 3, 4, 4, 4 };
	return b[d % 10];
}

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The bytes a non-NULL value takes at p (left bytes there), and where its
 * payload starts (*skip: a length prefix), or -1. */
static long value_size(uint8_t type, uint16_t meta, const uint8_t *p, size_t left, unsigned *skip)
{
	unsigned pre = 0;

	*skip = 0;
	switch (type) {
	case T_TINY:
	case T_YEAR:
		return 1;
	case T_SHORT:
		return 2;
	case T_INT24:
	case T_DATE:
	case T_NEWDATE:
	case T_TIME:
		return 3;
	case T_LONG:
	case T_TIMESTAMP:
		return 4;
	case T_LONGLONG:
	case T_DATETIME:
		return 8;
	case T_FLOAT:
	case T_DOUBLE:
		return meta == 4 || meta == 8 ? (long)meta : -1;
	case T_TIMESTAMP2:
		return 4 + (meta + 1) / 2;
	case T_DATETIME2:
		return 5 + (meta + 1) / 2;
	case T_TIME2:
		return 3 + (meta + 1) / 2;
	case T_NULL:
		return 0;
	case T_NEWDECIMAL: {
		unsigned prec = meta >> 8, scale = meta & 0xff, intg = prec - scale;
		if (scale > prec)
			return -1;
		return (long)(intg / 9) * 4 + (long)dig2bytes(intg % 9) + (long)(scale / 9) * 4 +
		       (long)dig2bytes(scale % 9);
	}
	case T_BIT:
		return (long)(meta & 0xff) + ((meta >> 8) ? 1 : 0);
	case T_VARCHAR:
	case T_VAR_STRING:
		pre = meta > 255 ? 2 : 1;
		break;
	case T_BLOB:
	case T_TINY_BLOB:
	case T_MEDIUM_BLOB:
	case T_LONG_BLOB:
	case T_GEOMETRY:
	case T_JSON:
		pre = meta;
		if (pre < 1 || pre > 4)
			return -1;
		break;
	case T_STRING: {
		uint8_t real = (uint8_t)(meta >> 8), b1 = (uint8_t)meta;
		if (real == T_ENUM || real == T_SET)
			return b1 >= 1 && b1 <= 8 ? (long)b1 : -1;
		/* CHAR(n): the length's high bits are folded into the type
		 * byte. */
		pre = ((((unsigned)real & 0x30) ^ 0x30) << 4 | b1) > 255 ? 2 : 1;
		break;
	}
	default:
		return -1;
	}
	if (left < pre)
		return -1;
	*skip = pre;
	return (long)(pre + le(p, pre));
}

long rowimage_read(const struct rowimage_table *t, const uint8_t *present, const uint8_t *p,
		   size_t len, struct rowimage_cols *out)
{
	const uint8_t *nulls = p;
	uint32_t n_present = 0, j = 0;
	size_t at;

	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < t->n_cols; i++)
		n_present += (present[i / 8] >> (i % 8)) & 1;
	at = (n_present + 7) / 8;
	if (at > len)
		return -1;
	for (uint32_t i = 0; i < t->n_cols; i++) {
		unsigned skip;
		long size;

		if (!((present[i / 8] >> (i % 8)) & 1))
			continue;
		if ((nulls[j / 8] >> (j % 8)) & 1) {
			j++;
			continue;
		}
		j++;
		size = value_size(t->types[i], t->meta[i], p + at, len - at, &skip);
		if (size < 0 || (size_t)size > len - at)
			return -1;
		if (t->is_jobs) {
			const uint8_t *v = p + at + skip;
			size_t vlen = (size_t)size - skip;
			if (i == ROWIMAGE_COL_QUEUE) {
				out->has_queue = true;
				out->queue = v;
				out->queue_len = vlen;
			} else if (i == ROWIMAGE_COL_STATUS) {
				out->has_status = true;
				out->status = (unsigned)le(v, (unsigned)vlen);
			} else if (i == ROWIMAGE_COL_RUN_AT) {
				out->has_run_at = true;
				out->run_at = v;
				out->run_at_len = vlen;
			}
		}
		at += (size_t)size;
	}
	return (long)at;
}
