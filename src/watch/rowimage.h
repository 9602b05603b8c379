/* The row images of the binary log's rows events, decoded as far as the
 * watcher needs: for a kyu_jobs row, its queue, its status and the bytes
 * of its run_at. Pure functions over bytes, so that the unit tests can
 * feed them images built by hand.
 *
 * Not Connector/C's mariadb_rpl_extract_rows: it reads every column of
 * the table map whatever the image holds (so it misreads the images of
 * binlog_row_image = MINIMAL or NOBLOB), and checks no length against the
 * end of the buffer. Here every read is bounded, and a column type this
 * module cannot size makes the image unreadable, which the caller treats
 * as "something changed" (a wake-up for every queue), never as nothing. */
#ifndef KYU_ROWIMAGE_H
#define KYU_ROWIMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/attr.h"

/* Column positions in kyu_jobs (sql/schema.sql; the columns after them
 * were all added at the end, so every schema version has these here). */
#define ROWIMAGE_COL_QUEUE 2
#define ROWIMAGE_COL_STATUS 7
#define ROWIMAGE_COL_RUN_AT 9

/* The status ENUM's values as the image holds them (1-based; 0 is the
 * empty string a non-strict sql_mode stores for a bad value). */
enum rowimage_status {
	RI_STATUS_EMPTY = 0,
	RI_WAITING = 1,
	RI_RUNNING,
	RI_SUCCEEDED,
	RI_FAILED,
	RI_CANCELLED,
	RI_BLOCKED,
};

#define ROWIMAGE_MAX_COLS 256

/* A table map made ready for decoding: where each column's metadata is. */
struct rowimage_table {
	uint32_t n_cols;
	uint8_t types[ROWIMAGE_MAX_COLS];
	uint16_t meta[ROWIMAGE_MAX_COLS]; /* the column's metadata, decoded (0: none) */
	bool is_jobs; /* the columns kyu reads are where and what kyu_jobs has them */
};

/* From a table map's column types (n_cols bytes) and packed metadata.
 * Returns 0, or -1 when a type's metadata cannot be walked (more columns
 * than ROWIMAGE_MAX_COLS, a truncated block). */
KYU_MUSTCHECK int rowimage_table_init(struct rowimage_table *t, const uint8_t *types,
				      uint32_t n_cols, const uint8_t *meta, size_t meta_len);

/* What one image says of the columns kyu reads; has_* false when the image
 * does not hold the column (a minimal image) or it is NULL. */
struct rowimage_cols {
	bool has_queue, has_status, has_run_at;
	const uint8_t *queue; /* not NUL-terminated */
	size_t queue_len;
	unsigned status;
	const uint8_t *run_at;
	size_t run_at_len;
};

/* Decode the image at p (len bytes left) holding the columns set in
 * present (a bitmap of t->n_cols bits). Returns the bytes it took, or -1
 * when it cannot be read (a type of unknown size, bytes short). */
long rowimage_read(const struct rowimage_table *t, const uint8_t *present, const uint8_t *p,
		   size_t len, struct rowimage_cols *out);

#endif
