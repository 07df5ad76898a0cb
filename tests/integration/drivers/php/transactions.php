<?php
// PHP PDO (pdo_mysql): transactions through the proxy (issue 11).
// Read-your-write inside beginTransaction() with native prepared statements
// (ATTR_EMULATE_PREPARES=false) and with text statements (exec(), and query()
// with emulation on: the text protocol), on a shard of db1 and one of db0, then
// rollBack() (row gone) and commit() (row visible from another connection and
// on the backend); autocommit off by ATTR_AUTOCOMMIT=false and by text
// spellings, then ROLLBACK; a multi-row INSERT spanning both backends under
// autocommit off: OK and part of the transaction, or refused; never OK then
// lost. Rows: conv_id 9_100_048 + shard (shard 2 on db0, 9 on db1).
// SP_TX_DIRECT=1 runs the same against MariaDB itself (db0, database
// im_txref with an unsharded msg). Run by run_php.sh transactions.
$passed = 0;
$failed = 0;
function check($ok, $what) {
    global $passed, $failed;
    if ($ok) { $passed++; } else { $failed++; echo "FAIL: $what\n"; }
}
function env($name, $fallback) {
    $v = getenv($name);
    return $v === false || $v === '' ? $fallback : $v;
}
function open($port, $user, $password, $dbname, $extra = []) {
    return new PDO("mysql:host=127.0.0.1;port=$port;dbname=$dbname;charset=utf8mb4", $user, $password, $extra + [
        PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
        PDO::ATTR_EMULATE_PREPARES => false,
        PDO::ATTR_STRINGIFY_FETCHES => false,
    ]);
}
function err(PDOException $e) {
    return 'ERROR ' . ($e->errorInfo[1] ?? '?') . ': ' . ($e->errorInfo[2] ?? $e->getMessage());
}

$DIRECT = getenv('SP_TX_DIRECT') === '1';
function target($extra = []) {
    global $DIRECT;
    return $DIRECT ? open(env('SP_DB0_PORT', '3307'), 'root', 'root_pw', 'im_txref', $extra)
                   : open(env('SP_PROXY_PORT', '16033'), 'app', 'app_pw', 'im', $extra);
}

const CONV_BASE = 9100048; // % 16 == 0
const DB0_CONV = CONV_BASE + 2;
const DB1_CONV = CONV_BASE + 9;
const SPAN = [CONV_BASE + 3, CONV_BASE + 12, CONV_BASE + 5, CONV_BASE + 14]; // db0, db1, db0, db1
const INSERT = 'INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES (?, ?, ?, 77, 1, ?, 0)';
const SELECT = 'SELECT seq, content FROM msg WHERE conv_id = ? AND seq = ?';

$seqBase = random_int(1000000, 999999999) * 1000;
$counter = 0;
function nextRow($conv) {
    global $seqBase, $counter;
    $counter++;
    return ['conv' => $conv, 'seq' => $seqBase + $counter, 'msg_id' => $conv * 1000 + $counter,
            'content' => "php-$conv-" . ($seqBase + $counter)];
}

$backend = [open(env('SP_DB0_PORT', '3307'), 'root', 'root_pw', 'im'),
            open(env('SP_DB1_PORT', '3308'), 'root', 'root_pw', 'im')];
if ($DIRECT) {
    $backend[0]->exec('CREATE DATABASE IF NOT EXISTS im_txref');
    $backend[0]->exec('CREATE TABLE IF NOT EXISTS im_txref.msg LIKE im.msg_00');
    echo 'php: direct mode, MariaDB on ' . env('SP_DB0_PORT', '3307') . " database im_txref\n";
}
$checker = target();

// "through another connection,on the backend"
function counts($r) {
    global $checker, $backend, $DIRECT;
    $through = (int)$checker->query("SELECT COUNT(*) FROM msg WHERE conv_id = {$r['conv']} AND seq = {$r['seq']}")->fetchColumn();
    if ($DIRECT) return "$through,$through";
    $shard = $r['conv'] % 16;
    $physical = (int)$backend[intdiv($shard, 8)]->query(sprintf('SELECT COUNT(*) FROM msg_%02d WHERE conv_id = %d AND seq = %d',
        $shard, $r['conv'], $r['seq']))->fetchColumn();
    return "$through,$physical";
}
function expectCount($r, $want, $when) {
    $got = counts($r);
    check($got === "$want,$want", "$when: conv_id {$r['conv']} seq {$r['seq']} (shard " . ($r['conv'] % 16)
        . "): $got rows (through another connection, on the backend), want $want");
}
function insertRow(PDO $c, $r, $prepared) {
    if ($prepared) {
        $st = $c->prepare(INSERT);
        $st->bindValue(1, $r['conv'], PDO::PARAM_INT);
        $st->bindValue(2, $r['seq'], PDO::PARAM_INT);
        $st->bindValue(3, $r['msg_id'], PDO::PARAM_INT);
        $st->bindValue(4, $r['content'], PDO::PARAM_LOB);
        $st->execute();
        $n = $st->rowCount();
    } else {
        $n = $c->exec("INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES "
            . "({$r['conv']}, {$r['seq']}, {$r['msg_id']}, 77, 1, '{$r['content']}', 0)");
    }
    if ($n !== 1) throw new RuntimeException("insert affected $n rows");
}
function readBack(PDO $c, $r, $prepared) {
    if ($prepared) {
        $st = $c->prepare(SELECT);
        $st->execute([$r['conv'], $r['seq']]);
    } else {
        $c->setAttribute(PDO::ATTR_EMULATE_PREPARES, true); // query() by the text protocol
        try {
            $st = $c->query("SELECT seq, content FROM msg WHERE conv_id = {$r['conv']} AND seq = {$r['seq']}");
        } finally {
            $c->setAttribute(PDO::ATTR_EMULATE_PREPARES, false);
        }
    }
    $out = [];
    foreach ($st->fetchAll(PDO::FETCH_NUM) as $row) $out[] = "{$row[0]}:{$row[1]}";
    return $out;
}

function readYourWrite($conv, $prepared, $commit) {
    $name = 'read-your-write prepared=' . json_encode($prepared) . ' commit=' . json_encode($commit) . ' shard ' . ($conv % 16);
    $r = nextRow($conv);
    $c = target();
    try {
        $c->beginTransaction();
        insertRow($c, $r, $prepared);
        $got = readBack($c, $r, $prepared);
        check($got === ["{$r['seq']}:{$r['content']}"], "$name: SELECT in the transaction: " . json_encode($got));
        expectCount($r, 0, "$name: uncommitted, seen from outside");
        if ($commit) $c->commit(); else $c->rollBack();
    } catch (PDOException $e) {
        check(false, "$name: " . err($e));
        return;
    }
    $c = null;
    expectCount($r, $commit ? 1 : 0, $name . ($commit ? ': after commit()' : ': after rollBack()'));
}

function autocommitOff($spelling, $conv, $prepared) {
    $name = "$spelling (prepared=" . json_encode($prepared) . ', shard ' . ($conv % 16) . ')';
    $r = nextRow($conv);
    try {
        if ($spelling === 'ATTR_AUTOCOMMIT=false') {
            $c = target([PDO::ATTR_AUTOCOMMIT => false]);
        } else {
            $c = target();
            $c->exec($spelling);
        }
        check((int)$c->query('SELECT @@autocommit')->fetchColumn() === 0, "$name: @@autocommit is not 0");
        insertRow($c, $r, $prepared);
        check(count(readBack($c, $r, $prepared)) === 1, "$name: read your write");
        expectCount($r, 0, "$name: uncommitted, seen from outside");
        $c->exec('ROLLBACK');
    } catch (PDOException $e) {
        check(false, "$name: " . err($e));
        return;
    }
    $c = null;
    expectCount($r, 0, "$name: after ROLLBACK");
}

function spanningInsert($prepared, $ending) {
    $name = 'multi-backend INSERT under autocommit off (prepared=' . json_encode($prepared) . ") then $ending";
    $rows = [];
    $values = [];
    $args = [];
    foreach (SPAN as $conv) {
        $r = nextRow($conv);
        $rows[] = $r;
        if ($prepared) {
            $values[] = "(?, ?, ?, 77, 1, 'span', 0)";
            array_push($args, $r['conv'], $r['seq'], $r['msg_id']);
        } else {
            $values[] = "({$r['conv']}, {$r['seq']}, {$r['msg_id']}, 77, 1, 'span', 0)";
        }
    }
    $sql = 'INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES ' . implode(', ', $values);
    $outcome = 'OK';
    $want = 0;
    $c = target([PDO::ATTR_AUTOCOMMIT => false]);
    try {
        if ($prepared) {
            $st = $c->prepare($sql);
            $st->execute($args);
            $n = $st->rowCount();
        } else {
            $n = $c->exec($sql);
        }
        check($n === count($rows), "$name: affected $n");
        $c->exec($ending);
        if ($ending === 'COMMIT') $want = 1;
    } catch (PDOException $e) {
        $outcome = err($e);
        $c->exec('ROLLBACK');
    }
    $c = null;
    echo "  $name: $outcome\n";
    foreach ($rows as $r) expectCount($r, $want, "$name ($outcome)");
}

function cleanup() {
    $c = target();
    foreach (array_merge([DB0_CONV, DB1_CONV], SPAN) as $conv) $c->exec("DELETE FROM msg WHERE conv_id = $conv");
}

cleanup();
try {
    foreach ([DB1_CONV, DB0_CONV] as $conv) {
        foreach ([true, false] as $prepared) {
            readYourWrite($conv, $prepared, false);
            readYourWrite($conv, $prepared, true);
        }
    }
    foreach ([DB1_CONV, DB0_CONV] as $conv) {
        foreach ([true, false] as $prepared) {
            foreach (['ATTR_AUTOCOMMIT=false', 'SET autocommit=false', "SET SESSION autocommit = 'off'",
                      'SET @@autocommit = FALSE'] as $spelling) {
                autocommitOff($spelling, $conv, $prepared);
            }
        }
    }
    foreach ([true, false] as $prepared) {
        spanningInsert($prepared, 'ROLLBACK');
        spanningInsert($prepared, 'COMMIT');
        cleanup();
    }
} finally {
    cleanup();
}
echo "$passed passed, $failed failed\n";
exit($failed > 0 ? 1 : 0);
