// An application of kyu's SQL contract through Node.js's mysql driver as
// Debian packages it (node-mysql 2.18, the callback API; mysql2 is not in
// Debian), as tests/integration/input/clients.sh runs it: each check prints
// "ok NAME" or "not ok NAME: WHAT", and the last line is "checks N".
//
// node-mysql keeps an error's number (err.errno), SQLSTATE (err.sqlState)
// and message (err.sqlMessage); the application branches on the number.
// It expands a bound array into a list and an object into `k` = v pairs:
// argv and env go in as JSON.stringify's text. A bound Date is written as
// a wall clock in the connection's `timezone` option ('local' by default:
// the process's zone), so an instant goes in as FROM_UNIXTIME(epoch
// seconds), or as a Date on a connection whose `timezone` is the session's
// time_zone. clients.sh runs it with TZ set to a zone unlike the server's.
//
// Environment: KYU_TEST_SOCKET, KYU_TEST_DB (user kyu, password kyu),
// KYU_TEST_OUT; NODE_PATH finds Debian's /usr/share/nodejs.
'use strict';
const fs = require('fs');
const path = require('path');
const mysql = require('mysql');

let n = 0;
function check(name, ok, what) {
  n++;
  console.log(ok ? `ok ${name}` : `not ok ${name}: ${what}`);
}

const KINDS = { 31001: 'queue-full', 31002: 'after', 31003: 'traceparent',
  31004: 'argv', 31005: 'env', 31006: 'status' };

// What the application makes of an error: the number, and for a duplicate
// the key's name in the message.
function kind(e) {
  if (KINDS[e.errno]) return KINDS[e.errno];
  if (e.errno === 1265 && e.sqlMessage.includes("column 'status'")) return 'status';
  if (e.errno === 1062) {
    if (e.sqlMessage.includes("'kyu_jobs_unique_key'")) return 'unique-key-held';
    if (e.sqlMessage.includes("'kyu_jobs_id'")) return 'id-taken';
  }
  return `other ${e.errno}`;
}

function connect(opts) {
  return mysql.createConnection({ socketPath: process.env.KYU_TEST_SOCKET, user: 'kyu',
    password: 'kyu', database: process.env.KYU_TEST_DB, charset: 'utf8mb4', ...opts });
}
// The callback API as a promise: the rows (or OkPacket); a CALL gives
// [rows, OkPacket].
function q(c, sql, params) {
  return new Promise((resolve, reject) => {
    c.query(sql, params || [], (err, rows) => (err ? reject(err) : resolve(rows)));
  });
}
// [kind, errno, sqlState, message] of the refusal, or null when it was taken.
async function refusal(c, sql, params) {
  try {
    await q(c, sql, params);
  } catch (e) {
    if (e.errno === undefined) throw e;
    return [kind(e), e.errno, e.sqlState, e.sqlMessage];
  }
  return null;
}
const out = (name, text) => fs.writeFileSync(path.join(process.env.KYU_TEST_OUT, name), text);
const js = (v) => JSON.stringify(v);

async function main() {
  const c = connect();

  // The driver's own expansions of a bound array (a list of values: 1136,
  // the column count) and object (`A` = 'b': 1054, an unknown column).
  // Neither gets into the table; String() of an array is not JSON.
  let r = await refusal(c, 'INSERT INTO kyu_jobs (id, argv) VALUES (?, ?)', ['node-arr', ['/bin/echo', 'hi']]);
  check('argv-array', r !== null && r[1] === 1136, js(r));
  r = await refusal(c, 'INSERT INTO kyu_jobs (id, command, env) VALUES (?, ?, ?)', ['node-obj', 'true', { A: 'b' }]);
  check('env-object', r !== null && r[1] === 1054 && r[3].includes("Unknown column 'A'"), js(r));
  r = await refusal(c, 'INSERT INTO kyu_jobs (id, command, env) VALUES (?, ?, ?)', ['node-num', 'true', js({ N: 5 })]);
  check('env-number', r !== null && r[0] === 'env' && r[2] === 'KYU05' && r[3].includes('value of N is not a string'), js(r));
  r = await refusal(c, 'INSERT INTO kyu_jobs (id, argv) VALUES (?, ?)', ['node-argv', js(['/bin/echo', 1])]);
  check('argv-number', r !== null && r[0] === 'argv' && r[3].includes('argv[1] is not a string'), js(r));
  r = await refusal(c, 'INSERT INTO kyu_jobs (id, argv) VALUES (?, ?)', ['node-argv-str', String(['/bin/echo', 'hi'])]);
  check('argv-string', r !== null && r[0] === 'argv' && r[2] === 'KYU04', js(r));

  await q(c, "SET SESSION sql_mode = ''");
  r = await refusal(c, 'INSERT INTO kyu_jobs (id, command, status) VALUES (?, ?, ?)', ['node-us', 'true', 'canceled']);
  check('status-lax', r !== null && r[0] === 'status' && r[3].includes('status of job node-us'), js(r));
  await q(c, 'SET SESSION sql_mode = DEFAULT');
  r = await refusal(c, 'INSERT INTO kyu_jobs (id, command, status) VALUES (?, ?, ?)', ['node-us', 'true', 'canceled']);
  check('status-strict', r !== null && r[0] === 'status', js(r));

  r = await refusal(c, 'INSERT INTO kyu_jobs (queue, command) VALUES (?, ?)', ['node-full', 'true']);
  check('queue-full', r !== null && r[0] === 'queue-full' && r[2] === 'KYU01' && r[3].startsWith('kyu: queue node-full is full'), js(r));
  r = await refusal(c, 'INSERT INTO kyu_jobs (command, after) VALUES (?, ?)', ['true', js(['node-nope'])]);
  check('after', r !== null && r[0] === 'after', js(r));
  r = await refusal(c, 'INSERT INTO kyu_jobs (command, traceparent) VALUES (?, ?)', ['true', '00-nope']);
  check('traceparent', r !== null && r[0] === 'traceparent', js(r));

  // RETURNING gives the id; insertId is seq. A good job with argv and env
  // made by JSON.stringify, which clients.sh waits for.
  let rows = await q(c, 'INSERT INTO kyu_jobs (argv, env) VALUES (?, ?) RETURNING id, seq',
    [js(['/bin/sh', '-c', 'test "$A" = "ü 1"']), js({ A: 'ü 1' })]);
  const jobId = rows[0].id;
  const back = await q(c, 'SELECT seq FROM kyu_jobs WHERE id = ?', [jobId]);
  check('returning', jobId.length === 36 && back.length === 1 && back[0].seq === rows[0].seq, js(rows));
  out('node-id', jobId);
  const ok = await q(c, "INSERT INTO kyu_jobs (id, command, run_at) VALUES ('node-later', 'true', NOW(6) + INTERVAL 1 DAY)");
  rows = await q(c, 'SELECT id FROM kyu_jobs WHERE seq = ?', [ok.insertId]);
  check('insertid-is-seq', rows.length === 1 && rows[0].id === 'node-later', js(rows));
  r = await refusal(c, 'INSERT INTO kyu_jobs (id, command) VALUES (?, ?)', [jobId, 'true']);
  check('dup-id', r !== null && r[0] === 'id-taken', js(r));
  // A unique key held by a job due tomorrow (which cannot end meanwhile).
  await q(c, "INSERT INTO kyu_jobs (id, command, unique_key, run_at) VALUES ('node-hold', 'true', 'node-key', NOW(6) + INTERVAL 1 DAY)");
  r = await refusal(c, 'INSERT INTO kyu_jobs (command, unique_key) VALUES (?, ?)', ['true', 'node-key']);
  check('dup-unique-key', r !== null && r[0] === 'unique-key-held', js(r));

  // null for every field not given, as an ORM sends it: the defaults.
  rows = await q(c, 'INSERT INTO kyu_jobs (id, queue, command, priority, run_at, max_attempts, status)' +
    ' VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id, queue, priority, status, run_at <= NOW(6) AS due',
  [null, null, 'exit 0', null, null, null, null]);
  const nr = rows[0];
  check('nulls', nr.id.length === 36 && nr.queue === 'default' && nr.priority === 0 &&
    nr.status === 'waiting' && nr.due === 1, js(nr));
  out('node-null-id', nr.id);

  // A session of its own zone (schema version 8): the default run_at is
  // now; FROM_UNIXTIME takes the epoch; a Date goes in right only where
  // the connection's timezone option is the session's zone.
  const tz = connect({ timezone: '+09:00' });
  await q(tz, "SET time_zone = '+09:00'");
  const t0 = Date.now() / 1000;
  rows = await q(tz, "INSERT INTO kyu_jobs (command) VALUES ('true') RETURNING id");
  const tzId = rows[0].id;
  rows = await q(c, 'SELECT UNIX_TIMESTAMP(run_at) AS at FROM kyu_jobs WHERE id = ?', [tzId]);
  const at = Number(rows[0].at);
  check('tz-default', Math.abs(at - t0) < 60, `run_at is ${(at - t0).toFixed(0)} s from now`);
  out('node-tz-id', tzId);
  await q(tz, "INSERT INTO kyu_jobs (id, command, run_at) VALUES ('node-tz-epoch', 'true', FROM_UNIXTIME(?))", [t0 + 2]);
  rows = await q(tz, 'SELECT UNIX_TIMESTAMP(CONVERT_TZ(run_at, @@global.time_zone, @@session.time_zone)) AS at' +
    " FROM kyu_jobs WHERE id = 'node-tz-epoch'");
  check('tz-epoch', Math.abs(Number(rows[0].at) - (t0 + 2)) < 0.001, `${rows[0].at} for ${t0 + 2}`);
  // A Date, whole milliseconds: the driver writes them (3 digits).
  const due = new Date(Math.floor(t0 * 1000) + 3000);
  await q(tz, "INSERT INTO kyu_jobs (id, command, run_at) VALUES ('node-tz-date', 'true', ?)", [due]);
  rows = await q(c, "SELECT UNIX_TIMESTAMP(run_at) AS at FROM kyu_jobs WHERE id = 'node-tz-date'");
  check('tz-date-option', Math.abs(Number(rows[0].at) * 1000 - due.getTime()) < 1, `${rows[0].at} for ${due.getTime() / 1000}`);
  // The same Date on a connection of the default option ('local', the
  // process's zone) in that session: off by the two zones' difference
  // (run by clients.sh in a zone west of Tokyo: due in the past, it runs).
  const local = connect();
  await q(local, "SET time_zone = '+09:00'");
  await q(local, "INSERT INTO kyu_jobs (id, command, run_at) VALUES ('node-local-later', 'true', ?)", [due]);
  rows = await q(c, "SELECT UNIX_TIMESTAMP(run_at) AS at FROM kyu_jobs WHERE id = 'node-local-later'");
  const off = Number(rows[0].at) - due.getTime() / 1000;
  const want = -(9 * 3600 + due.getTimezoneOffset() * 60);
  check('tz-date-local', Math.abs(off - want) < 0.01 && want !== 0, `${off} s off, ${want} expected`);
  local.end();
  tz.end();

  // Waiting: autocommit is on in node-mysql; in a transaction the CALL
  // is refused (31011) and the job not yet submitted.
  await q(c, 'START TRANSACTION');
  await q(c, "INSERT INTO kyu_jobs (id, command) VALUES ('node-wait', 'sleep 0.5')");
  r = await refusal(c, "CALL kyu_wait('node-wait', 30)");
  check('wait-in-transaction', r !== null && r[1] === 31011 && r[2] === 'KYU11' && r[3].includes('open transaction'), js(r));
  await q(c, 'COMMIT');
  rows = await q(c, 'CALL kyu_wait(?, ?)', ['node-wait', 60]);
  const w = rows[0] && rows[0][0];
  check('wait', w && w.id === 'node-wait' && w.status === 'succeeded' && w.exit_code === 0, js(rows));
  r = await refusal(c, 'CALL kyu_wait(?, 1)', ['node-no-such-job']);
  check('wait-unknown-id', r !== null && r[1] === 31012 && r[2] === 'KYU12', js(r));
  c.end();
  console.log(`checks ${n}`);
}

main().catch((e) => {
  console.log(`not ok exception: ${e.stack}`);
  process.exit(1);
});
