-- Placeholder for step 8, written on another branch at the same time as
-- step 9 (009-daemon-slots.sql): the merge replaces this file with that
-- branch's 008-*.sql and deletes this one. It only records the version,
-- so that the steps run 1, 2, 3, ... without a gap on this branch.
INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 8), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
