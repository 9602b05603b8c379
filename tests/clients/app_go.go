// An application of kyu's SQL contract through Go's database/sql and the
// MySQL driver as Debian packages it (golang-github-go-sql-driver-mysql-dev
// 1.5, built in GOPATH mode without the network), as
// tests/integration/input/clients.sh runs it: each check prints "ok NAME"
// or "not ok NAME: WHAT", and the last line is "checks N".
//
// The driver's *mysql.MySQLError keeps an error's number and message and
// drops its SQLSTATE (1.7 added it): the application branches on Number.
// database/sql pools connections, so what a session sets (sql_mode, a
// transaction) is done on one connection taken with db.Conn or db.Begin;
// a session's time_zone goes in the DSN. An instant goes in as
// FROM_UNIXTIME(?) with float64 epoch seconds; DATETIMEs are read as
// UNIX_TIMESTAMP() (scanning one into a time.Time needs parseTime=true
// and loc set to the server's zone).
//
// Environment: KYU_TEST_SOCKET, KYU_TEST_DB (user kyu, password kyu),
// KYU_TEST_OUT.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

var n int

func check(name string, ok bool, what string) {
	n++
	if ok {
		fmt.Printf("ok %s\n", name)
	} else {
		fmt.Printf("not ok %s: %s\n", name, what)
	}
}

var kinds = map[uint16]string{31001: "queue-full", 31002: "after", 31003: "traceparent",
	31004: "argv", 31005: "env", 31006: "status"}

// A refusal as the application sees it: what it makes of the number (and
// for a duplicate, of the key's name in the message), the number, the
// message. nil when the statement was taken.
type refused struct {
	kind   string
	number uint16
	msg    string
}

func (r *refused) String() string {
	if r == nil {
		return "taken"
	}
	return fmt.Sprintf("%s %d %q", r.kind, r.number, r.msg)
}

func refusalOf(err error) *refused {
	if err == nil {
		return nil
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return &refused{kind: "not a MySQLError: " + err.Error()}
	}
	r := &refused{kind: kinds[me.Number], number: me.Number, msg: me.Message}
	switch {
	case r.kind != "":
	case me.Number == 1265 && strings.Contains(me.Message, "column 'status'"):
		r.kind = "status"
	case me.Number == 1062 && strings.Contains(me.Message, "'kyu_jobs_unique_key'"):
		r.kind = "unique-key-held"
	case me.Number == 1062 && strings.Contains(me.Message, "'kyu_jobs_id'"):
		r.kind = "id-taken"
	default:
		r.kind = fmt.Sprintf("other %d", me.Number)
	}
	return r
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...interface{}) (sql.Result, error)
}

func refusal(db execer, query string, args ...interface{}) *refused {
	_, err := db.ExecContext(context.Background(), query, args...)
	return refusalOf(err)
}

func is(r *refused, kind string) bool { return r != nil && r.kind == kind }

func jsonOf(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func open(params string) *sql.DB {
	db, err := sql.Open("mysql", fmt.Sprintf("kyu:kyu@unix(%s)/%s?charset=utf8mb4%s",
		os.Getenv("KYU_TEST_SOCKET"), os.Getenv("KYU_TEST_DB"), params))
	if err != nil {
		panic(err)
	}
	return db
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func save(name, text string) {
	must(os.WriteFile(filepath.Join(os.Getenv("KYU_TEST_OUT"), name), []byte(text), 0o644))
}

func main() {
	ctx := context.Background()
	db := open("")
	defer db.Close()

	// fmt's rendering of a slice or map is not JSON; json.Marshal's of a
	// number is, and is refused for what it holds.
	r := refusal(db, "INSERT INTO kyu_jobs (id, argv) VALUES (?, ?)", "go-sprint", fmt.Sprint([]string{"/bin/echo", "hi"}))
	check("argv-sprint", is(r, "argv") && strings.Contains(r.msg, "argv of job go-sprint"), r.String())
	r = refusal(db, "INSERT INTO kyu_jobs (id, command, env) VALUES (?, ?, ?)", "go-num", "true", jsonOf(map[string]int{"N": 5}))
	check("env-number", is(r, "env") && strings.Contains(r.msg, "value of N is not a string"), r.String())
	r = refusal(db, "INSERT INTO kyu_jobs (id, argv) VALUES (?, ?)", "go-argv", jsonOf([]interface{}{"/bin/echo", 1}))
	check("argv-number", is(r, "argv") && strings.Contains(r.msg, "argv[1] is not a string"), r.String())

	// sql_mode is the session's: one connection of the pool, held.
	conn, err := db.Conn(ctx)
	must(err)
	must(refusalErr(conn, "SET SESSION sql_mode = ''"))
	r = refusal(conn, "INSERT INTO kyu_jobs (id, command, status) VALUES (?, ?, ?)", "go-us", "true", "canceled")
	check("status-lax", is(r, "status") && strings.Contains(r.msg, "status of job go-us"), r.String())
	must(refusalErr(conn, "SET SESSION sql_mode = DEFAULT"))
	r = refusal(conn, "INSERT INTO kyu_jobs (id, command, status) VALUES (?, ?, ?)", "go-us", "true", "canceled")
	check("status-strict", is(r, "status"), r.String())
	must(conn.Close())

	r = refusal(db, "INSERT INTO kyu_jobs (queue, command) VALUES (?, ?)", "go-full", "true")
	check("queue-full", is(r, "queue-full") && strings.HasPrefix(r.msg, "kyu: queue go-full is full"), r.String())
	r = refusal(db, "INSERT INTO kyu_jobs (command, after) VALUES (?, ?)", "true", jsonOf([]string{"go-nope"}))
	check("after", is(r, "after"), r.String())
	r = refusal(db, "INSERT INTO kyu_jobs (command, traceparent) VALUES (?, ?)", "true", "00-nope")
	check("traceparent", is(r, "traceparent"), r.String())

	// RETURNING gives the id; LastInsertId is seq. A good job with argv
	// and env made by json.Marshal, which clients.sh waits for.
	var id string
	var seq, seq2 int64
	must(db.QueryRow("INSERT INTO kyu_jobs (argv, env) VALUES (?, ?) RETURNING id, seq",
		jsonOf([]string{"/bin/sh", "-c", `test "$A" = "ü 1"`}), jsonOf(map[string]string{"A": "ü 1"})).Scan(&id, &seq))
	must(db.QueryRow("SELECT seq FROM kyu_jobs WHERE id = ?", id).Scan(&seq2))
	check("returning", len(id) == 36 && seq == seq2, fmt.Sprintf("%s %d %d", id, seq, seq2))
	save("go-id", id)
	res, err := db.Exec("INSERT INTO kyu_jobs (id, command, run_at) VALUES ('go-later', 'true', NOW(6) + INTERVAL 1 DAY)")
	must(err)
	last, err := res.LastInsertId()
	must(err)
	var lastID string
	must(db.QueryRow("SELECT id FROM kyu_jobs WHERE seq = ?", last).Scan(&lastID))
	check("lastinsertid-is-seq", lastID == "go-later", lastID)
	r = refusal(db, "INSERT INTO kyu_jobs (id, command) VALUES (?, ?)", id, "true")
	check("dup-id", is(r, "id-taken"), r.String())
	// A unique key held by a job due tomorrow (which cannot end meanwhile).
	_, err = db.Exec("INSERT INTO kyu_jobs (id, command, unique_key, run_at) VALUES ('go-hold', 'true', 'go-key', NOW(6) + INTERVAL 1 DAY)")
	must(err)
	r = refusal(db, "INSERT INTO kyu_jobs (command, unique_key) VALUES (?, ?)", "true", "go-key")
	check("dup-unique-key", is(r, "unique-key-held"), r.String())

	// nil for every field not given, as an ORM sends it: the defaults.
	var queue, status string
	var prio, due int
	must(db.QueryRow("INSERT INTO kyu_jobs (id, queue, command, priority, run_at, max_attempts, status)"+
		" VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id, queue, priority, status, run_at <= NOW(6)",
		nil, nil, "exit 0", nil, nil, nil, nil).Scan(&id, &queue, &prio, &status, &due))
	check("nulls", len(id) == 36 && queue == "default" && prio == 0 && status == "waiting" && due == 1,
		fmt.Sprintf("%s %s %d %s %d", id, queue, prio, status, due))
	save("go-null-id", id)

	// A session of its own zone, set in the DSN (schema version 8): the
	// default run_at is now, FROM_UNIXTIME takes the epoch.
	tz := open("&time_zone=%27%2B09%3A00%27")
	defer tz.Close()
	t0 := float64(time.Now().UnixMicro()) / 1e6
	must(tz.QueryRow("INSERT INTO kyu_jobs (command) VALUES ('true') RETURNING id").Scan(&id))
	var at float64
	must(db.QueryRow("SELECT UNIX_TIMESTAMP(run_at) FROM kyu_jobs WHERE id = ?", id).Scan(&at))
	check("tz-default", math.Abs(at-t0) < 60, fmt.Sprintf("run_at is %.0f s from now", at-t0))
	save("go-tz-id", id)
	_, err = tz.Exec("INSERT INTO kyu_jobs (id, command, run_at) VALUES ('go-tz-epoch', 'true', FROM_UNIXTIME(?))", t0+2)
	must(err)
	must(tz.QueryRow("SELECT UNIX_TIMESTAMP(CONVERT_TZ(run_at, @@global.time_zone, @@session.time_zone)),"+
		" @@session.time_zone FROM kyu_jobs WHERE id = 'go-tz-epoch'").Scan(&at, &status))
	check("tz-epoch", math.Abs(at-(t0+2)) < 0.001 && status == "+09:00", fmt.Sprintf("%f for %f in %s", at, t0+2, status))

	// Waiting. In a transaction the CALL is refused (31011), and the job
	// is not yet submitted; after the commit it waits.
	tx, err := db.Begin()
	must(err)
	_, err = tx.Exec("INSERT INTO kyu_jobs (id, command) VALUES ('go-wait', 'sleep 0.5')")
	must(err)
	r = refusalOf(tx.QueryRow("CALL kyu_wait(?, ?)", "go-wait", 30).Scan(&id))
	check("wait-in-transaction", r != nil && r.number == 31011 && strings.Contains(r.msg, "open transaction"), r.String())
	must(tx.Commit())
	var exitCode sql.NullInt64
	var sig, errText, result, attempts, finished sql.NullString
	err = db.QueryRow("CALL kyu_wait(?, ?)", "go-wait", 60).Scan(&id, &status, &exitCode, &sig, &errText, &result, &attempts, &finished)
	check("wait", err == nil && id == "go-wait" && status == "succeeded" && exitCode.Valid && exitCode.Int64 == 0,
		fmt.Sprintf("%v %s %s %v", err, id, status, exitCode))
	r = refusalOf(db.QueryRow("CALL kyu_wait(?, 1)", "go-no-such-job").Scan(&id))
	check("wait-unknown-id", r != nil && r.number == 31012, r.String())

	fmt.Printf("checks %d\n", n)
}

// A statement that must be taken, on a held connection.
func refusalErr(db execer, query string) error {
	_, err := db.ExecContext(context.Background(), query)
	return err
}
