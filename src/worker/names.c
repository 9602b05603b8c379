/* Filing queue names: kyu_jobs' INSERT trigger notes a name it does not find
 * in kyu_queue_names in kyu_queue_names_new (schema version 10). See
 * names.h. */
#include "names.h"

/* With the retention lock only (the pass's @kyu_cleanup). The DELETE reads the names it removes under READ COMMITTED (every kyud
 * session), where a row another transaction has just inserted and not
 * committed is passed over, not waited for; it is filed next time. */
void names_file_build(struct strbuf *sb)
{
	sb_adds(sb,
		"; BEGIN NOT ATOMIC IF @kyu_cleanup = 1 THEN INSERT IGNORE INTO kyu_queue_names "
		"(name) SELECT DISTINCT name FROM kyu_queue_names_new; DELETE FROM "
		"kyu_queue_names_new WHERE name IN (SELECT name FROM kyu_queue_names) LIMIT 10000; END IF; "
		"END");
}
