-- Step 11: a job whose seq was used before (kyu_jobs emptied and its
-- AUTO_INCREMENT reset, or TRUNCATE) while the note of its queue's name
-- from the first use is still in kyu_queue_names_new: the note's key is
-- (name, seq), and step 10's trigger made the submitter's INSERT fail on
-- it (1062). The note is only a hint that the name exists: one already
-- there is as good, so the trigger's INSERT ignores a duplicate.
--
-- Online: the trigger is replaced in one statement (CREATE OR REPLACE);
-- kyud of version 10 reads and writes the same tables: schema_compat
-- stays 1.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_queue_name',
  ' AFTER INSERT ON kyu_jobs FOR EACH ROW',
  ' IF NOT (@kyu_noted <=> NEW.queue) AND',
  '   NOT EXISTS (SELECT 1 FROM kyu_queue_names WHERE name = NEW.queue) THEN',
  '  INSERT IGNORE INTO kyu_queue_names_new (name, seq) VALUES (NEW.queue, NEW.seq);',
  '  SET @kyu_noted = NEW.queue;',
  ' END IF');

INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 11), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
