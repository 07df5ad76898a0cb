// Go database/sql + go-sql-driver/mysql: transactions through the proxy
// (issue 11). Read-your-write inside db.BeginTx() with server-side prepared
// statements (interpolateParams=false) and with text statements, on a shard of
// db1 and one of db0, then Rollback (row gone) and Commit (row visible from
// another connection and on the backend); autocommit off by the DSN parameter
// ?autocommit=false (the driver sends SET autocommit=false) and by text
// spellings, then ROLLBACK; a multi-row INSERT whose rows span both backends
// under autocommit off: OK and part of the transaction, or refused; never OK
// then lost. Rows: conv_id 9_100_016 + shard (shard 2 on db0, 9 on db1).
//
// SP_TX_DIRECT=1 runs the same flows against MariaDB itself (db0, database
// im_txref with an unsharded msg) to prove the test right. Built by run_go.sh.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"time"

	"github.com/go-sql-driver/mysql"
)

var passed, failed int

func check(ok bool, format string, args ...interface{}) {
	if ok {
		passed++
		return
	}
	failed++
	fmt.Printf("FAIL: "+format+"\n", args...)
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func errText(err error) string {
	if me, ok := err.(*mysql.MySQLError); ok {
		return fmt.Sprintf("ERROR %d: %s", me.Number, me.Message)
	}
	return fmt.Sprint(err)
}

const convBase = 9_100_016 // % 16 == 0
const db0Conv, db1Conv = convBase + 2, convBase + 9

var spanConvs = []uint64{convBase + 3, convBase + 12, convBase + 5, convBase + 14} // db0, db1, db0, db1

var (
	direct   = os.Getenv("SP_TX_DIRECT") == "1"
	backends [2]*sql.DB
	checker  *sql.DB
	seqBase  uint64
	counter  uint64
)

func open(user, password, port, db, extra string) *sql.DB {
	dsn := fmt.Sprintf("%s:%s@tcp(127.0.0.1:%s)/%s?interpolateParams=false%s", user, password, port, db, extra)
	d, err := sql.Open("mysql", dsn)
	if err != nil {
		panic(err)
	}
	return d
}

// target opens what is under test: the proxy, or MariaDB itself in direct mode.
func target(extra string) *sql.DB {
	if direct {
		return open("root", "root_pw", env("SP_DB0_PORT", "3307"), "im_txref", extra)
	}
	return open("app", "app_pw", env("SP_PROXY_PORT", "16033"), "im", extra)
}

type row struct{ conv, seq, msgID uint64 }

func next(conv uint64) row {
	counter++
	return row{conv, seqBase + counter, conv*1000 + counter}
}

func (r row) content() string { return fmt.Sprintf("go-%d-%d", r.conv, r.seq) }

func (r row) insertText() string {
	return fmt.Sprintf("INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES (%d, %d, %d, 77, 1, '%s', 0)",
		r.conv, r.seq, r.msgID, r.content())
}

const insertPrepared = "INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES (?, ?, ?, 77, 1, ?, 0)"
const selectPrepared = "SELECT seq, content FROM msg WHERE conv_id = ? AND seq = ?"

// counts: (through another connection of the target, in the physical table on its backend).
func counts(r row) [2]int {
	var out [2]int
	if err := checker.QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM msg WHERE conv_id = %d AND seq = %d", r.conv, r.seq)).Scan(&out[0]); err != nil {
		out[0] = -1
		fmt.Println("count:", errText(err))
	}
	if direct {
		out[1] = out[0]
		return out
	}
	shard := r.conv % 16
	if err := backends[shard/8].QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM msg_%02d WHERE conv_id = %d AND seq = %d", shard, r.conv, r.seq)).Scan(&out[1]); err != nil {
		out[1] = -1
		fmt.Println("backend count:", errText(err))
	}
	return out
}

func expectCount(r row, want int, when string) {
	got := counts(r)
	check(got == [2]int{want, want}, "%s: conv_id %d seq %d (shard %d): %v rows (through another connection, on the backend), want %d",
		when, r.conv, r.seq, r.conv%16, got, want)
}

// queryer is what *sql.Tx and *sql.Conn share.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...interface{}) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...interface{}) (*sql.Rows, error)
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// readBack returns the (seq, content) rows of r seen by q, prepared or as text.
func readBack(ctx context.Context, q queryer, r row, prepared bool) ([]string, error) {
	var rows *sql.Rows
	var err error
	if prepared {
		var st *sql.Stmt
		if st, err = q.PrepareContext(ctx, selectPrepared); err != nil {
			return nil, err
		}
		defer st.Close()
		rows, err = st.QueryContext(ctx, r.conv, r.seq)
	} else {
		rows, err = q.QueryContext(ctx, fmt.Sprintf("SELECT seq, content FROM msg WHERE conv_id = %d AND seq = %d", r.conv, r.seq))
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var seq uint64
		var content []byte
		if err := rows.Scan(&seq, &content); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("%d:%s", seq, content))
	}
	return out, rows.Err()
}

func insert(ctx context.Context, q queryer, r row, prepared bool) error {
	var res sql.Result
	var err error
	if prepared {
		var st *sql.Stmt
		if st, err = q.PrepareContext(ctx, insertPrepared); err != nil {
			return err
		}
		defer st.Close()
		res, err = st.ExecContext(ctx, r.conv, r.seq, r.msgID, []byte(r.content()))
	} else {
		res, err = q.ExecContext(ctx, r.insertText())
	}
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("insert affected %d rows", n)
	}
	return nil
}

// readYourWrite: BeginTx, INSERT, SELECT of that row, Rollback/Commit.
func readYourWrite(ctx context.Context, db *sql.DB, conv uint64, prepared, commit bool) {
	name := fmt.Sprintf("read-your-write prepared=%v commit=%v shard %d", prepared, commit, conv%16)
	r := next(conv)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		check(false, "%s: begin: %s", name, errText(err))
		return
	}
	if err := insert(ctx, tx, r, prepared); err != nil {
		check(false, "%s: insert: %s", name, errText(err))
		tx.Rollback()
		return
	}
	got, err := readBack(ctx, tx, r, prepared)
	want := fmt.Sprintf("%d:%s", r.seq, r.content())
	check(err == nil && len(got) == 1 && got[0] == want, "%s: SELECT in the transaction: %v %s, want [%s]", name, got, errText(err), want)
	expectCount(r, 0, name+": uncommitted, seen from outside")
	if commit {
		check(tx.Commit() == nil, "%s: commit failed", name)
		expectCount(r, 1, name+": after Commit")
	} else {
		err := tx.Rollback()
		check(err == nil, "%s: rollback: %v", name, err)
		expectCount(r, 0, name+": after Rollback")
	}
}

// autocommitOff: a connection whose autocommit was switched off by setup
// (DSN or text), INSERT, ROLLBACK, the row must be gone.
func autocommitOff(ctx context.Context, db *sql.DB, name string, setup []string, conv uint64, prepared bool) {
	name = fmt.Sprintf("%s (prepared=%v, shard %d)", name, prepared, conv%16)
	conn, err := db.Conn(ctx)
	if err != nil {
		check(false, "%s: connect: %s", name, errText(err))
		return
	}
	defer conn.Close()
	if len(setup) > 0 { // the connection goes back to db's pool: autocommit on again
		defer conn.ExecContext(ctx, "SET autocommit=1")
	}
	for _, s := range setup {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			check(false, "%s: %s: %s", name, s, errText(err))
			return
		}
	}
	var ac int
	check(conn.QueryRowContext(ctx, "SELECT @@autocommit").Scan(&ac) == nil && ac == 0, "%s: @@autocommit is %d", name, ac)
	r := next(conv)
	if err := insert(ctx, conn, r, prepared); err != nil {
		check(false, "%s: insert: %s", name, errText(err))
		return
	}
	got, err := readBack(ctx, conn, r, prepared)
	check(err == nil && len(got) == 1, "%s: read your write: %v %s", name, got, errText(err))
	expectCount(r, 0, name+": uncommitted, seen from outside")
	_, err = conn.ExecContext(ctx, "ROLLBACK")
	check(err == nil, "%s: ROLLBACK: %s", name, errText(err))
	expectCount(r, 0, name+": after ROLLBACK")
}

// spanningInsert: autocommit off, one INSERT with rows on both backends.
func spanningInsert(ctx context.Context, db *sql.DB, prepared bool, ending string) {
	name := fmt.Sprintf("multi-backend INSERT under autocommit off (prepared=%v) then %s", prepared, ending)
	conn, err := db.Conn(ctx)
	if err != nil {
		check(false, "%s: connect: %s", name, errText(err))
		return
	}
	defer conn.Close()
	defer conn.ExecContext(ctx, "SET autocommit=1")
	_, err = conn.ExecContext(ctx, "SET autocommit=0")
	check(err == nil, "%s: SET autocommit=0: %s", name, errText(err))
	var rs []row
	sqlText := "INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES "
	var args []interface{}
	for i, c := range spanConvs {
		r := next(c)
		rs = append(rs, r)
		if i > 0 {
			sqlText += ", "
		}
		if prepared {
			sqlText += "(?, ?, ?, 77, 1, 'span', 0)"
			args = append(args, r.conv, r.seq, r.msgID)
		} else {
			sqlText += fmt.Sprintf("(%d, %d, %d, 77, 1, 'span', 0)", r.conv, r.seq, r.msgID)
		}
	}
	res, err := conn.ExecContext(ctx, sqlText, args...)
	outcome := "OK"
	want := 0
	if err != nil {
		outcome = errText(err)
		_, err = conn.ExecContext(ctx, "ROLLBACK")
		check(err == nil, "%s: ROLLBACK after the error: %s", name, errText(err))
	} else {
		n, _ := res.RowsAffected()
		check(n == int64(len(rs)), "%s: affected %d", name, n)
		_, err = conn.ExecContext(ctx, ending)
		check(err == nil, "%s: %s: %s", name, ending, errText(err))
		if ending == "COMMIT" {
			want = 1
		}
	}
	fmt.Printf("  %s: %s\n", name, outcome)
	for _, r := range rs {
		expectCount(r, want, name+" ("+outcome+")")
	}
}

func cleanup(db *sql.DB) {
	for _, c := range append([]uint64{db0Conv, db1Conv}, spanConvs...) {
		if _, err := db.Exec(fmt.Sprintf("DELETE FROM msg WHERE conv_id = %d", c)); err != nil {
			fmt.Println("cleanup:", errText(err))
		}
	}
}

func main() {
	ctx := context.Background()
	rand.Seed(time.Now().UnixNano())
	seqBase = uint64(rand.Int63n(1_000_000_000)+1_000_000) * 1000
	backends[0] = open("root", "root_pw", env("SP_DB0_PORT", "3307"), "im", "")
	backends[1] = open("root", "root_pw", env("SP_DB1_PORT", "3308"), "im", "")
	if direct {
		for _, s := range []string{"CREATE DATABASE IF NOT EXISTS im_txref", "CREATE TABLE IF NOT EXISTS im_txref.msg LIKE im.msg_00"} {
			if _, err := backends[0].Exec(s); err != nil {
				fmt.Println("FAIL: direct mode setup:", errText(err))
				os.Exit(1)
			}
		}
		fmt.Println("go: direct mode, MariaDB on", env("SP_DB0_PORT", "3307"), "database im_txref")
	}
	db := target("")
	checker = target("")
	cleanup(db)
	defer cleanup(db)

	for _, conv := range []uint64{db1Conv, db0Conv} {
		for _, prepared := range []bool{true, false} {
			for _, commit := range []bool{false, true} {
				readYourWrite(ctx, db, conv, prepared, commit)
			}
		}
	}

	dsnOff := target("&autocommit=false") // go-sql-driver sends SET autocommit=false on connect
	for _, conv := range []uint64{db1Conv, db0Conv} {
		for _, prepared := range []bool{true, false} {
			autocommitOff(ctx, dsnOff, "DSN ?autocommit=false", nil, conv, prepared)
			autocommitOff(ctx, db, "SET autocommit=false", []string{"SET autocommit=false"}, conv, prepared)
			autocommitOff(ctx, db, "SET SESSION autocommit = 'off'", []string{"SET SESSION autocommit = 'off'"}, conv, prepared)
			autocommitOff(ctx, db, "SET @@autocommit = FALSE", []string{"SET @@autocommit = FALSE"}, conv, prepared)
		}
	}
	dsnOff.Close()

	for _, prepared := range []bool{true, false} {
		spanningInsert(ctx, db, prepared, "ROLLBACK")
		spanningInsert(ctx, db, prepared, "COMMIT")
		cleanup(db)
	}

	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
