/* How kyu prints a result set: the one printer behind every listing (list,
 * queues, schedules, locks, daemons, causes, stats) and kyu show, in one
 * of three forms chosen once by main:
 * - tsv: tab-separated rows under a header line, values as stored or
 *   escaped (cli.h), NULL as "NULL": what a pipe gets, unchanged for the
 *   scripts that read it;
 * - table: for eyes, what a terminal gets: aligned columns cut to the
 *   terminal's width (a long text ends in "…"), "-" for NULL, times to
 *   the second with how long ago they were against the server's clock,
 *   sizes and durations with units;
 * - json: one array of objects (a listing) or one object (show), keys
 *   the column names, NULL as null, the server's numbers as numbers. */
#ifndef KYU_TABLE_H
#define KYU_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/attr.h"
#include "common/db.h"

enum table_format { TABLE_TSV, TABLE_ALIGNED, TABLE_JSON };

/* Parse "tsv", "table" or "json"; -1 for anything else. */
KYU_MUSTCHECK int table_format_parse(const char *s, enum table_format *ret);
/* Set once by main: the form, and how values are escaped (cli.h). */
void table_setup(enum table_format f, bool raw, bool terminal);
enum table_format table_format(void);

/* Read the server's NOW() once, for the table form's "3 min ago" (the
 * times kyu prints are the database's, in its session's zone; the host's
 * clock may differ). Does nothing in the other forms or once read; on a
 * failure the times are printed without it. */
void table_read_now(struct db *db);

/* Print r in the chosen form; vertical: one "column: value" line each
 * (json: the first row as one object). */
void table_print(const struct db_result *r, bool vertical);
/* The table form's reading of the value v (len bytes, NULL: SQL NULL) of
 * column name, for kyu show's lines: with its zone and "(3 min ago)". */
void table_human(struct strbuf *sb, const char *name, const char *v, size_t len);
/* Append the value of v escaped for the chosen form (tsv's escaping, or
 * the terminal's), without a reading. */
void table_escape(struct strbuf *sb, const char *v, size_t len);

/* Print s[0..len) as text: its lines and tabs kept, and, when escape,
 * every other control character and byte that is not UTF-8 escaped as a
 * terminal needs (text.h). */
void table_put_text(const char *s, size_t len, bool escape);
/* Whether text for a terminal is escaped: stdout is one and --raw was not
 * given. */
bool table_escapes_text(void);

/* JSON: one cell (null, a number where the server sent one, else a
 * string; a value that is not UTF-8 as the terminal's escaped text), a
 * row as an object, and the printing of a value (freed). */
json_t *table_json_cell(const struct db_result *r, size_t row, unsigned col);
json_t *table_json_row(const struct db_result *r, size_t row);
/* Print v (taken over) on stdout; -1 when it cannot be encoded. */
KYU_MUSTCHECK int table_json_print(json_t *v);

/* The width kyu fits its table to: the terminal's, else $COLUMNS, else
 * 80. */
size_t table_columns(void);

#endif
