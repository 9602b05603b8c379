/* The dashboard's JSON (kyu web), made from result sets: text that is not
 * UTF-8 made valid, numeric columns as numbers where JavaScript holds them
 * exactly, rows as objects, and the error document of every failed
 * request. Without the connection (webdb.h) or any page (webpages.h,
 * weboverview.h), all of which use it: pure functions over what the db
 * module returned. */
#ifndef KYU_WEBJSON_H
#define KYU_WEBJSON_H

#include <stddef.h>

#include <jansson.h>

#include "common/db.h"

/* len bytes of text as a JSON string; bytes that are not UTF-8 (job
 * output is whatever the program wrote) become U+FFFD. */
json_t *webjson_text(const char *s, size_t len);

/* The cell at row, col of r: null for NULL; a number when its column's
 * name is in numeric (NULL-terminated; NULL: none) and it reads as one;
 * else text. */
json_t *webjson_cell(const struct db_result *r, size_t row, unsigned col,
		     const char *const *numeric);

/* The first max_rows rows of r, each as an object keyed by column name. */
json_t *webjson_rows(const struct db_result *r, size_t max_rows, const char *const *numeric);

/* *out = {"error": the formatted message}; returns status. */
unsigned webjson_error(json_t **out, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
