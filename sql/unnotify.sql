-- Removes kyu's push wake-up (see sql/notify.sql) from the current database:
--
--   mariadb kyu < sql/unnotify.sql
--
-- The triggers go first, so that no INSERT ever runs a trigger whose
-- function is gone. The function is server-wide: it is dropped only when no
-- trigger in any database still calls it (another kyu database on the same
-- server keeps it). Afterwards kyu_notify.so may be deleted from @@plugin_dir
-- if the function is gone. kyud keeps working, by polling.

DROP TRIGGER IF EXISTS kyu_jobs_notify_insert;
DROP TRIGGER IF EXISTS kyu_jobs_notify_update;
DROP TRIGGER IF EXISTS kyu_queues_notify_update;
DROP TRIGGER IF EXISTS kyu_queues_notify_delete;
DROP TRIGGER IF EXISTS kyu_schedules_notify_insert;
DROP TRIGGER IF EXISTS kyu_schedules_notify_update;
DROP TRIGGER IF EXISTS kyu_after_todo_notify;

SET @kyu_notify_users = (SELECT COUNT(*) FROM information_schema.TRIGGERS
                         WHERE ACTION_STATEMENT LIKE '%kyu\_notify(%');
EXECUTE IMMEDIATE IF(@kyu_notify_users > 0, 'DO 0', 'DROP FUNCTION IF EXISTS kyu_notify');
