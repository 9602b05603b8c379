#!/usr/bin/env bash
# after_batch: a job runs after every job of a batch -- the jobs of that
# batch that exist when it is inserted. A job added to the batch later does
# not hold it: after_batch, like after, is fixed at INSERT (the INSERT's
# trigger makes one edge per member it finds then), so a batch can grow
# while the jobs that waited for its first part run. One inserted after the
# new member waits for it too. An after_batch naming a batch with no jobs
# (unknown, or not yet filled) runs at once; one whose members all ended
# already runs at once too. A member that fails cancels the dependents of
# policy succeeded and lets those of policy finished run.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/after.sh"


start_kyud kyud.workers=2 kyud.slots=40

# Two gates, held exclusive by this shell (opened after kyud started, so
# that no job inherits them); a held job waits for a shared lock on one.
exec {gate1}>"$T_DIR/gate1"
flock -x "$gate1"
exec {gate2}>"$T_DIR/gate2"
flock -x "$gate2"
rec="echo \$KYU_JOB_ID >> $T_DIR/ran"
edges() { sql "SELECT COUNT(*) FROM kyu_after WHERE down_seq = (SELECT seq FROM kyu_jobs WHERE id = '$1')"; }
status() { sql "SELECT GROUP_CONCAT(status ORDER BY id) FROM kyu_jobs WHERE id IN ($1)"; }

# ---- unknown batch: runs at once (nothing to wait for), though gates are held.
sql "INSERT INTO kyu_jobs (id, command, after_batch) VALUES ('e1', '$rec', 'nope')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'e1'" succeeded 60
assert_eq "0	0	0" "$(sql "SELECT after_left, after_bad, (SELECT COUNT(*) FROM kyu_after) FROM kyu_jobs WHERE id = 'e1'")" \
	"e1: after_left, after_bad, edges"

# ---- a batch of 50 held jobs, then w, which waits for them.
sql "INSERT INTO kyu_jobs (id, command, batch)
     SELECT CONCAT('b', seq), 'flock -s $T_DIR/gate1 true && $rec', 'b1' FROM seq_1_to_50"
sql "INSERT INTO kyu_jobs (id, command, after_batch) VALUES ('w', '$rec', 'b1')"
assert_eq 50 "$(edges w)" "edges of w"
# late joins b1 after w was inserted: it does not hold w. w2, inserted
# after late, waits for it too; wb names late in after as well (one edge).
sql "INSERT INTO kyu_jobs (id, command, batch) VALUES ('late', 'flock -s $T_DIR/gate2 true && $rec', 'b1')"
sql "INSERT INTO kyu_jobs (id, command, after_batch) VALUES ('w2', '$rec', 'b1');
     INSERT INTO kyu_jobs (id, command, after, after_batch) VALUES ('wb', '$rec', '[\"late\"]', 'b1')"
assert_eq "50 51 51" "$(edges w) $(edges w2) $(edges wb)" "edges of w, w2, wb"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE batch = 'b1' AND status = 'running'" 51 60
wait_for "SELECT CONCAT(after_left, '/', after_bad) FROM kyu_jobs WHERE id = 'w'" 50/0 30
assert_eq blocked,blocked,blocked "$(status "'w','w2','wb'")" "w, w2, wb while b1 runs"

# ---- the 50 end: w runs, while late still runs and holds w2 and wb.
flock -u "$gate1"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'w'" succeeded 60
assert_eq running "$(status "'late'")" "late while w ran"
assert_eq blocked,blocked "$(status "'w2','wb'")" "w2, wb while late runs"
assert_eq 1 "$(sql "SELECT w.started_at >= (SELECT MAX(finished_at) FROM kyu_jobs WHERE batch = 'b1' AND id <> 'late')
                    FROM kyu_jobs AS w WHERE w.id = 'w'")" "w started after the last of its 50 finished"
assert_eq "1/0" "$(sql "SELECT CONCAT(after_left, '/', after_bad) FROM kyu_jobs WHERE id = 'w2'")" "w2's counters"

flock -u "$gate2"
exec {gate1}>&- {gate2}>&-
wait_for "SELECT GROUP_CONCAT(status ORDER BY id) FROM kyu_jobs WHERE id IN ('late','w2','wb')" \
	succeeded,succeeded,succeeded 60
assert_eq "" "$(early_starts)" "dependents that started before their upstream finished (started_at, finished_at)"

# ---- a batch whose members all ended: runs at once. A member that waits
# for its own batch waits for the others, not for itself.
sql "INSERT INTO kyu_jobs (id, command, batch) VALUES ('d1', '$rec', 'done'), ('d2', '$rec', 'done')"
wait_for "SELECT GROUP_CONCAT(status) FROM kyu_jobs WHERE batch = 'done'" succeeded,succeeded 60
sql "INSERT INTO kyu_jobs (id, command, after_batch) VALUES ('e2', '$rec', 'done');
     INSERT INTO kyu_jobs (id, command, batch, after_batch) VALUES ('self', '$rec', 'done', 'done')"
wait_for "SELECT GROUP_CONCAT(status ORDER BY id) FROM kyu_jobs WHERE id IN ('e2','self')" succeeded,succeeded 60
assert_eq "2 2" "$(edges e2) $(edges self)" "edges of e2, self"

# ---- a member fails: policy succeeded is cancelled, naming it; finished runs.
sql "INSERT INTO kyu_jobs (id, command, batch, max_attempts) VALUES
       ('f1', '$rec', 'bf', NULL), ('f2', '$rec; exit 3', 'bf', 1), ('f3', '$rec', 'bf', NULL);
     INSERT INTO kyu_jobs (id, command, after_batch) VALUES ('ws', '$rec', 'bf');
     INSERT INTO kyu_jobs (id, command, after_batch, after_policy) VALUES ('wf', '$rec', 'bf', 'finished')"
wait_for "SELECT GROUP_CONCAT(status ORDER BY id) FROM kyu_jobs WHERE id IN ('f1','f2','f3','wf','ws')" \
	succeeded,failed,succeeded,succeeded,cancelled 60
assert_eq "f2	kyu: upstream job f2 ended failed" "$(sql "SELECT cancelled_by, error FROM kyu_jobs WHERE id = 'ws'")" \
	"ws: cancelled_by, error"
stop_kyud

# Each job that ran, ran once; ws never ran.
assert_eq "" "$(sort "$T_DIR/ran" | uniq -d | tr '\n' ' ')" "jobs that ran twice"
assert_eq "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id <> 'ws'")" "$(sort -u "$T_DIR/ran" | wc -l)" "jobs that ran"
! grep -qx ws "$T_DIR/ran" || fail "ws ran although a member of its batch failed"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_after_todo")" "items left in kyu_after_todo"
