/* "Once per spell": a condition that repeats for a while (a server that
 * refuses connections, a scrape that keeps failing, a lock that stays
 * taken) is logged when it begins and, where that helps the reader, when
 * it ends, never at every repetition. One flag per condition, owned by
 * whoever meets it; these two helpers keep the reading obvious where the
 * flag is set and cleared. Header only: each is one store. For every
 * program's modules, wherever a condition is logged once per spell. */
#ifndef KYU_SPELL_H
#define KYU_SPELL_H

#include <stdbool.h>

struct spell {
	bool on;
};

/* The condition was met now: true only for the first time in a spell
 * (log it then). */
static inline bool spell_begin(struct spell *s)
{
	bool first = !s->on;

	s->on = true;
	return first;
}

/* The condition cleared: true if a spell was on (log its end then). */
static inline bool spell_end(struct spell *s)
{
	bool was = s->on;

	s->on = false;
	return was;
}

#endif
