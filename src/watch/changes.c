/* The short poll: where the server writes no binary log (or kyud may not
 * read it). See changes.h. */
#include "changes.h"

#include <stdio.h>
#include <string.h>

#include "follow.h"

void changes_reset(struct changes *c)
{
	memset(c, 0, sizeof(*c));
}

/* Whether the stored value differs from cell (NULL stored as ""), and
 * store cell. */
static bool moved(char *last, size_t size, const char *cell)
{
	const char *v = cell ? cell : "";
	bool m = strncmp(last, v, size - 1) != 0;

	snprintf(last, size, "%s", v);
	return m;
}

unsigned changes_compare(struct changes *c, const char *const cells[CHANGES_COLS])
{
	const char *now = cells[4] ? cells[4] : "";
	unsigned hints = 0;
	bool first = !c->primed;

	if (moved(c->last[0], sizeof(c->last[0]), cells[0]))
		hints |= FOLLOW_WAKE;
	/* Times compare as text: the server writes them all alike
	 * (YYYY-MM-DD hh:mm:ss.ffffff). */
	if (moved(c->last[1], sizeof(c->last[1]), cells[1]) && cells[1] &&
	    strcmp(cells[1], now) <= 0)
		hints |= FOLLOW_WAKE;
	if (moved(c->last[2], sizeof(c->last[2]), cells[2]))
		hints |= FOLLOW_CANCEL;
	if (moved(c->last[3], sizeof(c->last[3]), cells[3]))
		hints |= FOLLOW_WAKE;
	c->primed = true;
	/* What changed while nobody looked is unknown: one wake covers it. */
	return first ? FOLLOW_WAKE : hints;
}
