<?php
// An application of kyu's SQL contract through PHP's two MySQL drivers
// (mysqli and PDO, Debian php-mysql), as tests/integration/input/clients.sh
// runs it: each check prints "ok NAME" or "not ok NAME: WHAT", and the
// last line is "checks N". It branches on the error number alone, as an
// application that cannot rely on the SQLSTATE would, and also reads the
// SQLSTATE where the driver keeps it.
//
// Environment: KYU_TEST_SOCKET, KYU_TEST_DB (user kyu, password kyu).

$sock = getenv('KYU_TEST_SOCKET');
$db = getenv('KYU_TEST_DB');
$n = 0;

function check(string $name, bool $ok, string $what = ''): void
{
	global $n;
	$n++;
	echo ($ok ? "ok $name" : "not ok $name: $what"), "\n";
}

// What an application makes of an error number: kyu's own refusals and
// the two duplicates, told apart by the key's name.
function kind(int $errno, string $msg): string
{
	switch ($errno) {
	case 31001: return 'queue-full';
	case 31002: return 'after';
	case 31003: return 'traceparent';
	case 31004: return 'argv';
	case 31005: return 'env';
	case 31006: return 'status';
	case 1265: return str_contains($msg, "column 'status'") ? 'status' : 'truncated';
	case 1062:
		if (str_contains($msg, "'kyu_jobs_unique_key'")) return 'unique-key-held';
		if (str_contains($msg, "'kyu_jobs_id'")) return 'id-taken';
		return 'duplicate';
	}
	return "other $errno";
}

// mysqli: exceptions (PHP 8.1's default report mode, set anyway).
mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
$my = new mysqli('localhost', 'kyu', 'kyu', $db, 0, $sock);
$my->set_charset('utf8mb4');

// mysqli_query, one statement; returns [kind, sqlstate, message] or null.
function refusal(mysqli $my, string $sql): ?array
{
	try {
		$my->query($sql);
		return null;
	} catch (mysqli_sql_exception $e) {
		return [kind($e->getCode(), $e->getMessage()), $e->getSqlState(), $e->getMessage()];
	}
}

// The reviewer's mistake: an array bound as a string is 'Array'.
$argv = ['/bin/echo', 'hi'];
$st = $my->prepare('INSERT INTO kyu_jobs (id, argv) VALUES (?, ?)');
$id = 'php-array';
$st->bind_param('ss', $id, $argv);
try {
	@$st->execute();
	check('mysqli.argv-array', false, 'the INSERT of argv Array was taken');
} catch (mysqli_sql_exception $e) {
	check('mysqli.argv-array', kind($e->getCode(), $e->getMessage()) === 'argv' && $e->getSqlState() === 'KYU04'
		&& str_contains($e->getMessage(), 'argv of job php-array'), $e->getCode() . ' ' . $e->getSqlState() . ' ' . $e->getMessage());
}

$r = refusal($my, "INSERT INTO kyu_jobs (id, command, env) VALUES ('php-env', 'true', '{\"N\": 5}')");
check('mysqli.env-number', $r !== null && $r[0] === 'env' && $r[1] === 'KYU05' && str_contains($r[2], 'value of N'), json_encode($r));

$my->query("SET SESSION sql_mode = ''");
$r = refusal($my, "INSERT INTO kyu_jobs (id, command, status) VALUES ('php-us', 'true', 'canceled')");
check('mysqli.status-lax', $r !== null && $r[0] === 'status' && $r[1] === 'KYU06', json_encode($r));
$my->query("SET SESSION sql_mode = DEFAULT");
$r = refusal($my, "INSERT INTO kyu_jobs (id, command, status) VALUES ('php-us', 'true', 'canceled')");
check('mysqli.status-strict', $r !== null && $r[0] === 'status', json_encode($r));

$r = refusal($my, "INSERT INTO kyu_jobs (queue, command) VALUES ('php-full', 'true')");
check('mysqli.queue-full', $r !== null && $r[0] === 'queue-full' && $r[1] === 'KYU01', json_encode($r));
$r = refusal($my, "INSERT INTO kyu_jobs (command, after) VALUES ('true', '[\"php-nope\"]')");
check('mysqli.after', $r !== null && $r[0] === 'after' && $r[1] === 'KYU02', json_encode($r));
$r = refusal($my, "INSERT INTO kyu_jobs (command, traceparent) VALUES ('true', 'nope')");
check('mysqli.traceparent', $r !== null && $r[0] === 'traceparent' && $r[1] === 'KYU03', json_encode($r));

// RETURNING gives the id; insert_id is seq. A good job, which clients.sh
// waits for.
$st = $my->prepare('INSERT INTO kyu_jobs (argv, env) VALUES (?, ?) RETURNING id, seq');
$a = json_encode(['/bin/sh', '-c', 'test "$A" = "ü 1"']);
$e = json_encode(['A' => 'ü 1']);
$st->bind_param('ss', $a, $e);
$st->execute();
$row = $st->get_result()->fetch_assoc();
$back = $my->query("SELECT seq FROM kyu_jobs WHERE id = '" . $my->real_escape_string($row['id']) . "'")->fetch_row();
check('mysqli.returning', preg_match('/^[0-9a-f]{8}-/', $row['id']) === 1 && $back !== null && (int)$back[0] === (int)$row['seq'],
	json_encode($row) . ' ' . json_encode($back));
// insert_id is seq, not the id.
$my->query("INSERT INTO kyu_jobs (id, command, run_at) VALUES ('php-later', 'true', NOW(6) + INTERVAL 1 DAY)");
$back = $my->query('SELECT id FROM kyu_jobs WHERE seq = ' . (int)$my->insert_id)->fetch_row();
check('mysqli.insert-id-is-seq', $back !== null && $back[0] === 'php-later', json_encode($back));
file_put_contents(getenv('KYU_TEST_OUT') . '/php-id', $row['id']);
$r = refusal($my, "INSERT INTO kyu_jobs (id, command) VALUES ('" . $my->real_escape_string($row['id']) . "', 'true')");
check('mysqli.dup-id', $r !== null && $r[0] === 'id-taken', json_encode($r));
// A unique key held by a job due tomorrow (which cannot end meanwhile).
$my->query("INSERT INTO kyu_jobs (id, command, unique_key, run_at) VALUES ('php-hold', 'true', 'php-key', NOW(6) + INTERVAL 1 DAY)");
$r = refusal($my, "INSERT INTO kyu_jobs (command, unique_key) VALUES ('true', 'php-key')");
check('mysqli.dup-unique-key', $r !== null && $r[0] === 'unique-key-held', json_encode($r));

// PDO: its own exception, the SQLSTATE as getCode(), the number in errorInfo[1].
$pdo = new PDO("mysql:unix_socket=$sock;dbname=$db;charset=utf8mb4", 'kyu', 'kyu',
	[PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION, PDO::ATTR_EMULATE_PREPARES => false]);
try {
	$st = $pdo->prepare('INSERT INTO kyu_jobs (id, command, env) VALUES (?, ?, ?)');
	$st->execute(['pdo-env', 'true', '[object Object]']);
	check('pdo.env-object', false, 'the INSERT of env [object Object] was taken');
} catch (PDOException $e) {
	check('pdo.env-object', kind((int)$e->errorInfo[1], (string)$e->errorInfo[2]) === 'env' && $e->getCode() === 'KYU05',
		json_encode($e->errorInfo));
}

// NULL for every field the ORM was not given: the defaults.
$st = $pdo->prepare('INSERT INTO kyu_jobs (id, queue, command, priority, run_at, max_attempts, status) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id, queue, priority, status, run_at <= NOW(6) AS due');
$st->execute([null, null, 'exit 0', null, null, null, null]);
$row = $st->fetch(PDO::FETCH_ASSOC);
check('pdo.nulls', $row['queue'] === 'default' && (int)$row['priority'] === 0 && $row['status'] === 'waiting'
	&& (int)$row['due'] === 1 && strlen($row['id']) === 36, json_encode($row));
file_put_contents(getenv('KYU_TEST_OUT') . '/php-null-id', $row['id']);

// A session of its own zone, as a framework may set (schema version 8):
// the default run_at is now in the server's zone, FROM_UNIXTIME takes the
// epoch, and the documented CONVERT_TZ reads the instant back.
$tz = new PDO("mysql:unix_socket=$sock;dbname=$db;charset=utf8mb4", 'kyu', 'kyu',
	[PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION, PDO::ATTR_EMULATE_PREPARES => false,
	 PDO::MYSQL_ATTR_INIT_COMMAND => "SET time_zone = '-05:00'"]);
$t0 = microtime(true);
$id = $tz->query("INSERT INTO kyu_jobs (command) VALUES ('true') RETURNING id")->fetchColumn();
$at = (float)$my->query("SELECT UNIX_TIMESTAMP(run_at) FROM kyu_jobs WHERE id = '" . $my->real_escape_string($id) . "'")->fetch_row()[0];
check('pdo.tz-default', abs($at - $t0) < 60, "run_at is " . ($at - $t0) . " s from now");
file_put_contents(getenv('KYU_TEST_OUT') . '/php-tz-id', $id);
$st = $tz->prepare('INSERT INTO kyu_jobs (id, command, run_at) VALUES (?, ?, FROM_UNIXTIME(?))');
$id2 = 'php-tz-epoch';
$st->execute([$id2, 'true', $t0 + 2]);
$st = $tz->prepare('SELECT UNIX_TIMESTAMP(CONVERT_TZ(run_at, @@global.time_zone, @@session.time_zone)), UNIX_TIMESTAMP(run_at) FROM kyu_jobs WHERE id = ?');
$st->execute([$id2]);
$back = $st->fetch(PDO::FETCH_NUM);
check('pdo.tz-epoch', abs((float)$back[0] - ($t0 + 2)) < 0.001, json_encode([$back, $t0 + 2]));

// Waiting for it with mysqli: CALL returns the row, then the call's own
// result, which mysqli wants read before the next statement.
$r = $my->query("CALL kyu_wait('" . $my->real_escape_string($id) . "', 60)");
$row = $r->fetch_assoc();
$r->free();
while ($my->more_results()) $my->next_result();
check('mysqli.wait', $row !== null && $row['id'] === $id && $row['status'] === 'succeeded' && (int)$row['exit_code'] === 0,
	json_encode($row));

echo "checks $n\n";
