/* The dashboard's page, script and style sheet (src/web/assets/), compiled
 * into kyu-web by scripts/cmake/embed_assets.cmake: nothing to install
 * beside it and nothing to fetch at run time. */
#ifndef KYU_WEBASSETS_H
#define KYU_WEBASSETS_H

#include <stddef.h>

struct web_asset {
	const char *path; /* "/index.html" */
	const char *type; /* Content-Type */
	const unsigned char *data;
	size_t len;
};

/* Ends with an entry whose path is NULL. */
extern const struct web_asset web_assets[];

#endif
