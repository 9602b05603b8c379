/* Filing queue names: kyu_jobs' INSERT trigger notes a name it does not
 * find in kyu_queue_names in kyu_queue_names_new (schema version 10), and
 * kyud moves such names into kyu_queue_names, which the fan walks
 * (claim.c): in one statement at the end of the retention pass, so never
 * while idle. A name noted and not filed yet is walked all the same
 * (store_claim.c reads both tables): filing keeps kyu_queue_names_new
 * small and spares the next jobs of the queue their row there. */
#ifndef KYU_NAMES_H
#define KYU_NAMES_H

#include "common/util.h"

/* One statement (a compound one: one result), after the pass's others. */
void names_file_build(struct strbuf *sb);

#endif
