#include <stdlib.h>
#include <time.h>

#include "common/db.h"
#include "kyud/sdnotify.h"
#include "check.h"

static struct sdnotify n;
static struct child w[2];
static int n_w = 2;

int main(void)
{
	char buf[512];

	setenv("TZ", "UTC", 1);
	tzset();

	/* Before the workers started: no worker connected yet. */
	n.children = w;
	n.n = &n_w;
	n.workers = 2;
	w[0] = (struct child){ .pid = 100, .index = 1 };
	sdnotify_status_text(&n, buf, sizeof(buf));
	CHECK_STR(buf, "starting; 0 jobs running, 1 of 2 workers; database not connected yet");

	/* Started, the database refused both: when and why, by number and words. */
	n.started = true;
	w[1] = (struct child){ .pid = 101, .index = 2 };
	w[0].st.db_error = w[1].st.db_error = 2002;
	n.down_since = 1700000000;
	n.down_err = 2002;
	sdnotify_status_text(&n, buf, sizeof(buf));
	CHECK_STR(buf, "waiting for the database; 0 jobs running, 2 workers; database unreachable since "
		       "2023-11-14 22:13:20: error 2002 (server not reachable)");
	n.down_err = DB_ERR_NO_ANSWER;
	sdnotify_status_text(&n, buf, sizeof(buf));
	CONTAINS(buf, ": error 1 (no answer in time)");
	n.down_err = 1045;
	sdnotify_status_text(&n, buf, sizeof(buf));
	CONTAINS(buf, ": error 1045 (access denied)");
	/* A number kyu has no words for stays a number. */
	n.down_err = 4242;
	sdnotify_status_text(&n, buf, sizeof(buf));
	CONTAINS(buf, ": error 4242");
	LACKS(buf, "(");

	/* Ready: jobs summed over the workers; one of two connected. */
	n.ready = true;
	n.down_since = 0;
	w[0].st = (struct worker_state){ .connected = true, .running = 3 };
	w[1].st = (struct worker_state){ .running = 1, .db_error = 2013 };
	sdnotify_status_text(&n, buf, sizeof(buf));
	CHECK_STR(buf, "4 jobs running, 2 workers; database connected (1 of 2 workers)");
	w[1].st = (struct worker_state){ .connected = true, .running = 0 };
	w[0].st.running = 1;
	sdnotify_status_text(&n, buf, sizeof(buf));
	CHECK_STR(buf, "1 job running, 2 workers; database connected");

	/* A worker waiting to be restarted has no process: not counted. */
	w[1].pid = 0;
	n.stopping = true;
	sdnotify_status_text(&n, buf, sizeof(buf));
	CHECK_STR(buf, "stopping; 1 job running, 1 of 2 workers; database connected");

	/* A short buffer truncates, terminated. */
	sdnotify_status_text(&n, buf, 12);
	CHECK_STR(buf, "stopping; 1");
	return check_done("sdnotify");
}
