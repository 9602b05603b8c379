-- kyu push wake-up: triggers on kyu_jobs that tell kyud at once, with one UDP
-- datagram, that a job became due. Optional: without it kyud still finds
-- every job by its timed poll ([kyud] poll_interval), only later.
--
-- Install, once per server and database, as an administrator (CREATE
-- FUNCTION ... SONAME needs the INSERT privilege on mysql.func):
--
--   1. Copy the plugin into the server's plugin directory (from the build
--      tree, or from LIBDIR/kyu/ after `cmake --install`; the Debian package
--      mariadb-plugin-kyu installs it there):
--        cp build/src/udf/kyu_notify.so "$(mariadb -N -e 'SELECT @@plugin_dir')"
--   2. Load sql/schema.sql, then this file, into kyu's database:
--        mariadb kyu < sql/notify.sql
--
-- Running it again is harmless: the function is kept, the triggers replaced.
--
-- Where the datagrams go: kyud's [kyud] listen address, 127.0.0.1:7711 by
-- default. For another address (numeric only, IPv4 a.b.c.d:port or IPv6
-- [addr]:port), set @kyu_notify_target in the same session first:
--
--   { echo "SET @kyu_notify_target = '10.0.0.7:7711';"; cat sql/notify.sql; } | mariadb kyu
--
-- The address is written into the triggers as a literal (a numeric parse, no
-- name lookup, no settings table to read per INSERT); run the line above
-- again to change it. A bad address stops this script before any
-- trigger is touched. SHOW TRIGGERS shows the address in use. Several kyud
-- hosts cannot all be woken this way: point it at one (the others poll), or
-- have submitters run `kyu wake` instead.
--
-- What is sent: one datagram "kyu:QUEUE" per row that becomes due now -- a
-- multi-row INSERT sends one per row, kyud coalesces them. A job with a
-- future run_at sends nothing (kyud sleeps until the earliest due time). A
-- failed send (nobody listening, buffer full) is ignored: the INSERT never
-- fails or waits because of the wake-up.
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
-- Replication: a replica runs these triggers only for statement-based events
-- (row events run none unless slave_run_triggers_for_rbr is set); a replica
-- that does needs kyu_notify.so as well, and wakes its own target.

SET @kyu_notify_target = IFNULL(@kyu_notify_target, '127.0.0.1:7711');
SET @kyu_notify_update = IFNULL(@kyu_notify_update, 1);

CREATE FUNCTION IF NOT EXISTS kyu_notify RETURNS INTEGER SONAME 'kyu_notify.so';

-- Check the address now: kyu_notify() rejects a bad one when it initialises,
-- and the error ends the script here. (This sends one "any queue" wake-up.)
SET @kyu_notify_ok = kyu_notify(NULL, @kyu_notify_target);

-- A new row wakes kyud only when it is due now; NOW(6) is the statement's
-- start, the same instant the run_at default takes.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_notify_insert',
  ' AFTER INSERT ON kyu_jobs FOR EACH ROW',
  ' IF NEW.status = ''waiting'' AND NEW.run_at <= NOW(6) THEN',
  ' DO kyu_notify(NEW.queue, ', QUOTE(@kyu_notify_target), ');',
  ' END IF');

-- An update wakes kyud when it turns a row into a due waiting job that was
-- not one before: a retry, a run_at moved to now, a job released by a
-- stopping daemon. kyud's own updates (claim, heartbeat, finish, a retry
-- with backoff) leave the condition false and send nothing.
EXECUTE IMMEDIATE IF(@kyu_notify_update, CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_notify_update',
  ' AFTER UPDATE ON kyu_jobs FOR EACH ROW',
  ' IF NEW.status = ''waiting'' AND NEW.run_at <= NOW(6)',
  ' AND NOT (OLD.status = ''waiting'' AND OLD.run_at <= NOW(6)) THEN',
  ' DO kyu_notify(NEW.queue, ', QUOTE(@kyu_notify_target), ');',
  ' END IF'),
  'DROP TRIGGER IF EXISTS kyu_jobs_notify_update');

-- A change to a queue's settings may let its waiting jobs start (resumed,
-- a limit raised): wake kyud for that queue. A paused queue sends nothing.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_queues_notify_update',
  ' AFTER UPDATE ON kyu_queues FOR EACH ROW',
  ' IF NEW.paused = 0 THEN',
  ' DO kyu_notify(NEW.name, ', QUOTE(@kyu_notify_target), ');',
  ' END IF');
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_queues_notify_delete',
  ' AFTER DELETE ON kyu_queues FOR EACH ROW',
  ' DO kyu_notify(OLD.name, ', QUOTE(@kyu_notify_target), ')');

-- A schedule added, enabled, changed (the BEFORE UPDATE trigger of
-- sql/schema.sql then clears next_run) or moved earlier by hand makes kyud
-- read kyu_schedules again at once; the wake-up names no queue ("any
-- queue"), which is what kyud's scheduler listens for. kyud's own updates
-- (next_run computed or moved on, an error recorded) send nothing.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_schedules_notify_insert',
  ' AFTER INSERT ON kyu_schedules FOR EACH ROW',
  ' IF NEW.enabled = 1 THEN',
  ' DO kyu_notify(NULL, ', QUOTE(@kyu_notify_target), ');',
  ' END IF');
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_schedules_notify_update',
  ' AFTER UPDATE ON kyu_schedules FOR EACH ROW',
  ' IF NEW.enabled = 1 AND NEW.error IS NULL',
  ' AND (NEW.next_run IS NULL OR NEW.next_run < OLD.next_run OR NEW.enabled > OLD.enabled) THEN',
  ' DO kyu_notify(NULL, ', QUOTE(@kyu_notify_target), ');',
  ' END IF');
