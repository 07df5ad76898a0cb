// Go database/sql + go-sql-driver/mysql through the proxy with server-side
// prepared statements (interpolateParams=false, the driver's default): routed
// writes and reads on msg and tg_channel_message, an aggregate on one shard,
// refusals that leave the session usable. Placement is checked directly on
// the backends (conv_id % 16). Built offline in GOPATH mode by run_go.sh.
package main

import (
	"context"
	"database/sql"
	"errors"
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

func must(err error, what string) {
	if err != nil {
		fmt.Printf("FAIL: %s: %v\n%d passed, %d failed\n", what, err, passed, failed+1)
		os.Exit(1)
	}
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func open(user, password, port string) *sql.DB {
	dsn := fmt.Sprintf("%s:%s@tcp(127.0.0.1:%s)/im?interpolateParams=false&parseTime=true&loc=UTC", user, password, port)
	db, err := sql.Open("mysql", dsn)
	must(err, "open "+port)
	return db
}

func stmtExecutes(dbs []*sql.DB) int64 {
	var total int64
	for _, db := range dbs {
		var name string
		var value int64
		must(db.QueryRow("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'").Scan(&name, &value), "status")
		total += value
	}
	return total
}

func refusal(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func main() {
	ctx := context.Background()
	proxy := open("app", "app_pw", env("SP_PROXY_PORT", "16033"))
	backends := []*sql.DB{open("proxy", "proxy_pw", env("SP_DB0_PORT", "3307")), open("proxy", "proxy_pw", env("SP_DB1_PORT", "3308"))}
	executesBefore := stmtExecutes(backends)
	conn, err := proxy.Conn(ctx) // one session for everything: refusals must leave it usable
	must(err, "connect through the proxy")
	defer conn.Close()

	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	base := uint64(rng.Int63n(1<<40))*16 + (1 << 50)
	created := time.Date(2025, 3, 14, 15, 9, 26, 535000000, time.UTC)

	insert, err := conn.PrepareContext(ctx, "INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
	must(err, "prepare insert")
	convs := []uint64{}
	for k := uint64(0); k < 16; k++ {
		convs = append(convs, base+(k*3)%16)
	}
	for _, conv := range convs {
		res, err := insert.ExecContext(ctx, conv, 1, conv%100000, 42, 1, []byte{0, byte(conv % 256), 0xff}, 0, created)
		must(err, "insert")
		n, _ := res.RowsAffected()
		check(n == 1, "insert %d affected %d", conv, n)
	}
	// Placement, computed here: shard conv % 16, shards 0-7 on db0, 8-15 on db1.
	for _, conv := range convs {
		shard := conv % 16
		b := 0
		if shard >= 8 {
			b = 1
		}
		var count int
		must(backends[b].QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM msg_%02d WHERE conv_id = %d", shard, conv)).Scan(&count), "direct count")
		check(count == 1, "conv %d: db%d.msg_%02d has %d rows, want 1", conv, b, shard, count)
	}
	read, err := conn.PrepareContext(ctx, "SELECT seq, content, created_at FROM msg WHERE conv_id = ?")
	must(err, "prepare read")
	for _, conv := range convs {
		var seq int64
		var content []byte
		var at time.Time
		must(read.QueryRowContext(ctx, conv).Scan(&seq, &content, &at), "read")
		check(seq == 1 && string(content) == string([]byte{0, byte(conv % 256), 0xff}) && at.Equal(created),
			"read %d: seq %d content %x at %v", conv, seq, content, at)
	}
	// An aggregate on one shard.
	for s := 2; s <= 4; s++ {
		_, err := insert.ExecContext(ctx, base+5, s, 900000+s, 42, 1, []byte("x"), 0, created)
		must(err, "insert more")
	}
	var count, sum, max int64
	must(conn.QueryRowContext(ctx, "SELECT COUNT(*), SUM(seq), MAX(seq) FROM msg WHERE conv_id = ?", base+5).Scan(&count, &sum, &max), "aggregate")
	check(count == 4 && sum == 10 && max == 4, "aggregate: %d %d %d", count, sum, max)
	update, err := conn.PrepareContext(ctx, "UPDATE msg SET status = ? WHERE conv_id = ? AND seq >= ?")
	must(err, "prepare update")
	res, err := update.ExecContext(ctx, 2, base+5, 2)
	must(err, "update")
	n, _ := res.RowsAffected()
	check(n == 3, "update affected %d, want 3", n)
	// The maximum unsigned key: msg_15 on db1.
	maxKey := uint64(18446744073709551615)
	_, err = insert.ExecContext(ctx, maxKey, base, 7, 42, 1, []byte("max"), 0, created)
	must(err, "insert max key")
	var maxContent string
	must(backends[1].QueryRow(fmt.Sprintf("SELECT content FROM msg_15 WHERE conv_id = %d AND seq = %d", maxKey, base)).Scan(&maxContent), "max key on db1")
	check(maxContent == "max", "max key content %q", maxContent)

	// tg_channel_message: month bounds as parameters.
	peer := int64(1000000000 + rng.Intn(1000000000))
	month := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	_, err = conn.ExecContext(ctx, "INSERT INTO tg_channel_message (peer_id, message_id, message_month, message_time, text_body, ingested_at) VALUES (?, ?, ?, ?, ?, ?)",
		peer, 5, month, created, "hello from go", created)
	must(err, "tg insert")
	var body string
	must(conn.QueryRowContext(ctx, "SELECT text_body FROM tg_channel_message WHERE peer_id = ? AND message_month BETWEEN ? AND ?",
		peer, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)).Scan(&body), "tg read")
	check(body == "hello from go", "tg body %q", body)
	var crcShard int
	must(backends[0].QueryRow("SELECT CRC32(CONCAT('channel:', ?)) % 64 DIV 16", peer).Scan(&crcShard), "crc32")
	var found int
	must(backends[crcShard/2].QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM tg_channel_message_s%02d WHERE peer_id = %d", crcShard, peer)).Scan(&found), "tg placement")
	check(found == 1, "tg row not in tg_channel_message_s%02d", crcShard)

	// Refusals: the documented errors, and the session keeps working.
	_, err = conn.ExecContext(ctx, "UPDATE msg SET conv_id = ? WHERE conv_id = ?", base+1, base)
	check(refusal(err) == 9110, "key update: %v", err)
	_, err = conn.ExecContext(ctx, "DELETE FROM msg WHERE (conv_id = ? OR 1 = 1) AND seq = 0", base)
	check(refusal(err) == 9101, "missing key: %v", err)
	err = conn.QueryRowContext(ctx, "SELECT text_body FROM tg_channel_message WHERE peer_id = ? AND message_month >= ?", peer, month).Scan(&body)
	check(refusal(err) == 9105, "missing month bound: %v", err)
	rows, err := read.QueryContext(ctx, -5)
	if err == nil {
		rows.Close()
	}
	check(refusal(err) == 9104, "negative key: %v", err)
	var seq int64
	var content []byte
	var at time.Time
	check(read.QueryRowContext(ctx, base).Scan(&seq, &content, &at) == nil && seq == 1, "read after refusals")

	// The logical catalog with bound names, as GORM's HasTable asks it
	// (database/sql prepares on the server when a query has arguments).
	var tables int64
	hasTable := "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ? AND table_type = ?"
	must(conn.QueryRowContext(ctx, hasTable, "im", "msg", "BASE TABLE").Scan(&tables), "has table msg")
	check(tables == 1, "information_schema has %d tables named msg, want 1", tables)
	must(conn.QueryRowContext(ctx, hasTable, "im", "msg_07", "BASE TABLE").Scan(&tables), "has table msg_07")
	check(tables == 0, "information_schema shows the physical msg_07 to the application (%d)", tables)

	// Clean up through the proxy, prepared, and count.
	del, err := conn.PrepareContext(ctx, "DELETE FROM msg WHERE conv_id = ?")
	must(err, "prepare delete")
	var deleted int64
	for _, conv := range convs {
		res, err := del.ExecContext(ctx, conv)
		must(err, "delete")
		n, _ := res.RowsAffected()
		deleted += n
	}
	res, err = conn.ExecContext(ctx, "DELETE FROM msg WHERE conv_id = ? AND seq = ?", maxKey, base)
	must(err, "delete max key")
	n, _ = res.RowsAffected()
	deleted += n
	check(deleted == 16+3+1, "deleted %d rows, want 20", deleted)
	_, err = backends[crcShard/2].Exec(fmt.Sprintf("DELETE FROM tg_channel_message_s%02d WHERE peer_id = %d", crcShard, peer))
	must(err, "tg cleanup")

	executes := stmtExecutes(backends) - executesBefore
	check(executes >= 30, "only %d COM_STMT_EXECUTE reached the backends: not server-side prepared?", executes)
	fmt.Printf("go: %d COM_STMT_EXECUTE on the backends\n", executes)
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}
