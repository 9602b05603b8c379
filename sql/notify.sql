-- kyu push wake-up: triggers on kyu_jobs that tell every kyud serving a
-- row's queue at once, with one UDP datagram each, that a job became due.
-- Optional: without it kyud still finds every job by its timed poll ([kyud]
-- poll_interval), only later.
--
-- Install, once per server and database, as an administrator (CREATE
-- FUNCTION ... SONAME needs the INSERT privilege on mysql.func):
--
--   1. Copy the plugin into the server's plugin directory (from the build
--      tree, or from LIBDIR/kyu/ after `cmake --install`; the Debian package
--      mariadb-plugin-kyu installs it there):
--        cp build/src/udf/kyu_notify.so "$(mariadb -N -e 'SELECT @@plugin_dir')"
--   2. Load sql/schema.sql (schema version 5 or later: it has kyu_daemons
--      and the workflow columns),
--      then this file, into kyu's database:
--        mariadb kyu < sql/notify.sql
--
-- Running it again is harmless: the function is kept, the triggers replaced.
--
-- Where the datagrams go: to every live daemon of kyu_daemons, the registry
-- each kyud keeps its row in (kyu_jobs(7)), that serves the row's queue
-- (its [kyud] queues is empty or names it), at the address it registered
-- ([kyud] advertise, else listen). A row is live until its live_until, a
-- few of its daemon's refresh intervals after the last one; a daemon that
-- listens for no wake-ups (listen empty) registers no address and gets
-- none. The triggers read the kyu_daemons of their own database.
--
-- The fallback: when no live daemon serves the queue (daemons older than
-- schema version 3, or an account without privileges on kyu_daemons), the
-- datagram goes to one fixed address instead: 127.0.0.1:7711 (kyud's
-- default listen address) unless @kyu_notify_target is set in the same
-- session first (numeric only, IPv4 a.b.c.d:port or IPv6 [addr]:port); an
-- empty one turns the fallback off:
--
--   { echo "SET @kyu_notify_target = '10.0.0.7:7711';"; cat sql/notify.sql; } | mariadb kyu
--   { echo "SET @kyu_notify_target = '';"; cat sql/notify.sql; } | mariadb kyu
--
-- The fallback address is written into the triggers as a literal; a bad
-- one stops this script before any trigger is touched. SHOW TRIGGERS shows
-- it.
--
-- Who may be sent to: kyu_notify sends only to kyud's default address
-- (127.0.0.1:7711, [::1]:7711) and to the targets listed in the file
-- kyu_notify.allow beside kyu_notify.so in the plugin directory, one
-- "a.b.c.d:port" or "[v6]:port" a line ('#' starts a comment), read again
-- within a second of a change. Any account may call the function with any
-- target; the list, which only whoever installs plugins may write, keeps
-- it from being a way to send datagrams anywhere, loopback ports included
-- (a local syslog or any service that trusts local datagrams). List there
-- every daemon's [kyud] listen or advertise address other than the
-- default: a second daemon on 127.0.0.1:7712 as much as one on another
-- host, and a fallback address other than the default (this script refuses
-- one that is not listed). A live daemon whose address is not listed gets
-- no wake-up (and the fallback none either): its poll finds the jobs.
--   printf '127.0.0.1:7712\n10.0.0.7:7711\n' >"$(mariadb -N -e 'SELECT @@plugin_dir')/kyu_notify.allow"
--
-- What it sends: only "kyu:" and a queue name kyud accepts (at most 256
-- bytes of valid UTF-8, no control character), "kyu:" alone (any queue) or
-- the cancel hint; a call with anything else sends nothing and returns 0.
--
-- Rate: a (target, queue) pair gets at most one datagram per 10 ms; a call
-- within that window is sent once it has passed (by a thread of the
-- plugin), so the wake-up always follows the row. Datagrams that name
-- distinct queues take from a bucket of 2,000 a second per server process;
-- beyond it the target's "any queue" wake-up (one per 10 ms per target)
-- stands in, which wakes every queue there. The cancel hint has a budget of
-- its own per target. So a flood of calls from any account, however many
-- names it makes up, delays a real wake-up by 10 ms at most.

-- What is sent: one datagram "kyu:QUEUE" per daemon, queue and statement
-- (and, for running jobs cancelled, the cancel hint: see the UPDATE trigger):
-- an INSERT of 1,000 rows into one queue sends one to each daemon that
-- serves it (kyu_notify coalesces by a stamp of the statement,
-- CONNECTION_ID() and NOW(6); see src/udf/kyu_notify.c). A job with a
-- future run_at sends nothing (kyud sleeps until the earliest due time). A
-- failed send (nobody listening, buffer full) is ignored: the INSERT never
-- fails or waits because of the wake-up.
--
-- The datagram leaves at the INSERT, before the submitter commits: a
-- daemon whose claim then finds nothing looks once more 0.3 s later, so a
-- transaction that commits within that time is not left to the poll.
--
-- Locks: the triggers' read of kyu_daemons takes shared row locks (InnoDB
-- does for any table read by a statement that writes), held until the
-- submitter commits. kyud never waits for them: a daemon whose row is
-- locked skips that refresh and tries again a second later (kyud(8)).
--
-- The UPDATE trigger also runs for kyud's own updates (claim, heartbeat,
-- finish), where it only tests a condition: measured about 3-4 us of server
-- CPU per updated row (+15% on a 100-row claim or finish). Without it, a
-- manual retry is found by the next poll, or `kyu wake` sends the datagram.
-- To install the INSERT trigger only (and drop the UPDATE one):
--
--   { echo "SET @kyu_notify_update = 0;"; cat sql/notify.sql; } | mariadb kyu
--
-- Remove with sql/unnotify.sql -- never by deleting kyu_notify.so alone: a
-- trigger whose function is missing makes every INSERT into kyu_jobs fail.
--
-- Galera: every node needs kyu_notify.so, since a trigger runs on the node
-- that took the INSERT; kyu_daemons is replicated, so that node wakes the
-- daemons connected to the other nodes too.
--
-- Replication: a replica runs these triggers only for statement-based events
-- (row events run none unless slave_run_triggers_for_rbr is set); a replica
-- that does needs kyu_notify.so as well, and wakes the daemons of its own
-- copy of kyu_daemons.

SET @kyu_notify_target = IFNULL(@kyu_notify_target, '127.0.0.1:7711');
SET @kyu_notify_update = IFNULL(@kyu_notify_update, 1);

-- The triggers read kyu_daemons and kyu_jobs.after_changed: without them
-- (a schema older than version 5) every INSERT into kyu_jobs would fail.
-- This stops the script here instead, before anything is changed.
DO (SELECT COUNT(*) FROM kyu_daemons);
DO (SELECT COUNT(*) FROM kyu_after_todo);
DO (SELECT COUNT(after_changed) FROM kyu_jobs WHERE 0);

CREATE FUNCTION IF NOT EXISTS kyu_notify RETURNS INTEGER SONAME 'kyu_notify.so';

-- Check the fallback address now: kyu_notify() rejects a bad one when it
-- initialises, and the error ends the script here. (This sends one "any
-- queue" wake-up.)
EXECUTE IMMEDIATE IF(@kyu_notify_target = '', 'SET @kyu_notify_sent = 0',
  CONCAT('SET @kyu_notify_sent = kyu_notify(NULL, ', QUOTE(@kyu_notify_target), ')'));
-- ... and that kyu_notify may send to it (-1: it is neither the default
-- nor in kyu_notify.allow; see "Who may be sent to" above).
EXECUTE IMMEDIATE IF(@kyu_notify_sent < 0,
  CONCAT('SIGNAL SQLSTATE ''45000'' SET MESSAGE_TEXT = ', QUOTE(CONCAT('kyu_notify: target ',
    @kyu_notify_target, ' is not allowed: not 127.0.0.1:7711, and not listed in kyu_notify.allow in ',
    'the plugin directory'))),
  'DO 0');

-- The wake-up of queue @Q (an expression; NULL: any queue, which every
-- daemon listens for), as one statement. SUM(... >= 0) makes the server
-- call kyu_notify for every live daemon that serves the queue (COUNT may
-- skip a call whose result cannot be NULL); it is NULL when there is none,
-- which is when the fallback gets the datagram. The queue test is the one
-- of src/registry.h: an empty list serves every queue; FIND_IN_SET finds
-- no name with a comma, which no daemon can list.
-- The times compared are the server's zone (kyu_jobs(7), "Time"): in a
-- session of another zone, so is the NOW(6) they are compared with.
SET @kyu_notify_now = CONCAT('IF(@@session.time_zone = @@global.time_zone, NOW(6),',
  ' CONVERT_TZ(NOW(6), @@session.time_zone, @@global.time_zone))');
SET @kyu_notify_stamp = 'CONCAT(CONNECTION_ID(), ''/'', NOW(6))';
SET @kyu_notify_daemons = CONCAT(
  '(SELECT SUM(kyu_notify(@Q, d.wake_addr, ', @kyu_notify_stamp, ') >= 0)',
  ' FROM kyu_daemons d WHERE d.wake_addr IS NOT NULL AND d.live_until > ', @kyu_notify_now,
  ' AND (@Q IS NULL OR d.queues = '''' OR FIND_IN_SET(@Q, d.queues) > 0))');
SET @kyu_notify_wake = IF(@kyu_notify_target = '',
  CONCAT('DO ', @kyu_notify_daemons),
  CONCAT('IF ', @kyu_notify_daemons, ' IS NULL THEN',
         ' DO kyu_notify(@Q, ', QUOTE(@kyu_notify_target), ', ', @kyu_notify_stamp, ');',
         ' END IF'));

-- A new row wakes kyud only when it is due now; NOW(6) is the statement's
-- start, the same instant the run_at default takes.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_notify_insert',
  ' AFTER INSERT ON kyu_jobs FOR EACH ROW',
  ' IF NEW.status = ''waiting'' AND NEW.run_at <= ', @kyu_notify_now, ' THEN ',
  REPLACE(@kyu_notify_wake, '@Q', 'NEW.queue'), ';',
  ' END IF');

-- The cancel hint: "kyu:" and the byte 0x18 (CAN), which no queue name in
-- a wake-up can hold, sent where the wake-up of the row's queue goes.
-- kyud takes it for an "any queue" wake-up, and its workers renew their
-- leases at once, which is where a cancelled row is found and its process
-- stopped (within a round trip, not at the next heartbeat). Daemons older
-- than it ignore it as a malformed datagram.
SET @kyu_notify_cancel = REPLACE(REPLACE(@kyu_notify_wake, 'kyu_notify(@Q', 'kyu_notify(0x18'),
  '@Q', 'NEW.queue');

-- An update wakes kyud when it turns a row into a due waiting job that was
-- not one before: a retry, a run_at moved to now, a job released by a
-- stopping daemon. kyud's own updates (claim, heartbeat, finish, a retry
-- with backoff) leave the conditions false and send nothing. A running
-- job cancelled (by a plain UPDATE; kyu cancel and the dashboard also send
-- the hint themselves) sends the cancel hint, which also stands for the
-- "any queue" wake-up a cancelled job with dependents sends otherwise: a
-- job with dependents that ends or is opened again (kyu_jobs.after_changed
-- set, kyu_jobs(7) "Workflows") sends that wake-up, which makes every
-- daemon call kyu_settle, whoever ended it.
EXECUTE IMMEDIATE IF(@kyu_notify_update, CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_notify_update',
  ' AFTER UPDATE ON kyu_jobs FOR EACH ROW',
  ' IF NEW.status = ''waiting'' AND NEW.run_at <= ', @kyu_notify_now,
  ' AND NOT (OLD.status = ''waiting'' AND OLD.run_at <= ', @kyu_notify_now, ') THEN ',
  REPLACE(@kyu_notify_wake, '@Q', 'NEW.queue'), ';',
  ' ELSEIF NEW.status = ''cancelled'' AND OLD.status = ''running'' THEN ',
  @kyu_notify_cancel, ';',
  ' ELSEIF NEW.after_changed = 1 AND OLD.after_changed IS NULL THEN ',
  REPLACE(@kyu_notify_wake, '@Q', 'NULL'), ';',
  ' END IF'),
  'DROP TRIGGER IF EXISTS kyu_jobs_notify_update');

-- A change to a queue's settings may let its waiting jobs start (resumed,
-- a limit raised): wake the daemons of that queue. A paused queue sends
-- nothing.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_queues_notify_update',
  ' AFTER UPDATE ON kyu_queues FOR EACH ROW',
  ' IF NEW.paused = 0 THEN ',
  REPLACE(@kyu_notify_wake, '@Q', 'NEW.name'), ';',
  ' END IF');
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_queues_notify_delete',
  ' AFTER DELETE ON kyu_queues FOR EACH ROW ',
  REPLACE(@kyu_notify_wake, '@Q', 'OLD.name'));

-- A schedule added, enabled, changed (the BEFORE UPDATE trigger of
-- sql/schema.sql then clears next_run) or moved earlier by hand makes kyud
-- read kyu_schedules again at once; the wake-up names no queue ("any
-- queue"), which is what kyud's scheduler listens for, and goes to every
-- live daemon. kyud's own updates (next_run computed or moved on, an error
-- recorded) send nothing.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_schedules_notify_insert',
  ' AFTER INSERT ON kyu_schedules FOR EACH ROW',
  ' IF NEW.enabled = 1 THEN ',
  REPLACE(@kyu_notify_wake, '@Q', 'NULL'), ';',
  ' END IF');
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_schedules_notify_update',
  ' AFTER UPDATE ON kyu_schedules FOR EACH ROW',
  ' IF NEW.enabled = 1 AND NEW.error IS NULL',
  ' AND (NEW.next_run IS NULL OR NEW.next_run < OLD.next_run OR NEW.enabled > OLD.enabled) THEN ',
  REPLACE(@kyu_notify_wake, '@Q', 'NULL'), ';',
  ' END IF');

-- An item for kyu_settle (sql/schema.sql, "Workflows"): a job that waits
-- for others was inserted or deleted, or a job with dependents was deleted
-- before it ended. Whoever made it, the "any queue" wake-up makes the
-- first worker of every live daemon call kyu_settle at once, and claim
-- what it freed. kyud's own results settle themselves too; the calls that
-- then find nothing cost a round trip each.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_after_todo_notify',
  ' AFTER INSERT ON kyu_after_todo FOR EACH ROW ',
  REPLACE(@kyu_notify_wake, '@Q', 'NULL'));
