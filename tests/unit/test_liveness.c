/* liveness.h: a worker that never reported is left alone; one that stops
 * reporting is looked at once more, then killed; reports keep one alive;
 * the report interval follows the lease and systemd's watchdog. Real
 * processes and the real loop, a lease of four seconds. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "common/config.h"
#include "common/proto.h"
#include "kyud/liveness.h"

static struct child w[2];
static int n_w = 2;
static struct liveness l;

static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

/* Worker 2 reports every 0.1 s, for as long as the loop runs. */
static void on_report(EV_P_ ev_timer *t, int revents)
{
	struct worker_state st = { .connected = true, .running = 1 };
	(void)revents;
	liveness_report(&l, &w[1], proto_state_pack(&st));
	/* Until worker 1 is killed (worker 2's deadline stays armed). */
	if (w[0].life == CHILD_KILLED) {
		ev_timer_stop(EV_A_ t);
		ev_break(EV_A_ EVBREAK_ALL);
	}
}

int main(void)
{
	/* Not the default loop: that one reaps children itself. */
	struct ev_loop *loop = ev_loop_new(0);
	struct kyu_config cfg = { .lease = 4, .fence_margin = 1, .heartbeat = 1 };
	struct worker_state st = { .connected = true, .running = 3 };
	ev_timer rep;
	int status = 0;

	w[0] = (struct child){ .index = 1, .pid = sleeper() };
	w[1] = (struct child){ .index = 2, .pid = sleeper() };
	liveness_init(&l, loop, w, &n_w, &cfg);
	/* A quarter of lease - fence_margin - heartbeat (2 s), or of the
	 * watchdog's interval when that is shorter. */
	CHECK(liveness_report_us(&l) == 500000);
	liveness_set_watchdog(&l, 400000);
	CHECK(liveness_report_us(&l) == 100000);
	liveness_set_watchdog(&l, 0);

	liveness_spawned(&l, &w[0]);
	liveness_spawned(&l, &w[1]);
	CHECK(w[0].life == CHILD_STARTED && w[1].life == CHILD_STARTED);
	/* Never reported: it has claimed nothing, and no deadline is armed. */
	ev_run(loop, EVRUN_NOWAIT);
	CHECK(w[0].life == CHILD_STARTED);

	liveness_report(&l, &w[0], proto_state_pack(&st));
	CHECK(w[0].life == CHILD_ALIVE && w[0].st.running == 3 && w[0].st.connected);
	ev_timer_init(&rep, on_report, 0., 0.1);
	ev_timer_start(loop, &rep);
	/* Worker 1 goes silent: overdue, then killed; worker 2 reports on. */
	ev_run(loop, 0);
	CHECK(w[0].life == CHILD_KILLED);
	CHECK(waitpid(w[0].pid, &status, 0) == w[0].pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	CHECK(w[1].life == CHILD_ALIVE && w[1].st.running == 1);
	/* A killed worker's late report changes nothing; its exit clears it. */
	liveness_report(&l, &w[0], proto_state_pack(&st));
	CHECK(w[0].life == CHILD_KILLED);
	liveness_exited(&l, &w[0]);
	CHECK(w[0].life == CHILD_DOWN && w[0].st.running == 0);

	kill(w[1].pid, SIGKILL);
	waitpid(w[1].pid, &status, 0);
	liveness_free(&l);
	ev_loop_destroy(loop);
	return check_done("liveness");
}
