<?php
// PHP PDO (pdo_mysql) through the proxy with native prepared statements
// (ATTR_EMULATE_PREPARES=false): routed writes and reads on msg and
// tg_channel_message, an aggregate on one shard, refusals that leave the
// connection usable. Placement checked directly on the backends (conv_id % 16).
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
function open($port, $user, $password) {
    return new PDO("mysql:host=127.0.0.1;port=$port;dbname=im;charset=utf8mb4", $user, $password, [
        PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
        PDO::ATTR_EMULATE_PREPARES => false,
        PDO::ATTR_STRINGIFY_FETCHES => false,
    ]);
}
function errorCode(callable $fn) {
    try { $fn(); return 0; } catch (PDOException $e) { return $e->errorInfo[1] ?? -1; }
}

$proxy = open(env('SP_PROXY_PORT', '16033'), 'app', 'app_pw');
$db = [open(env('SP_DB0_PORT', '3307'), 'proxy', 'proxy_pw'), open(env('SP_DB1_PORT', '3308'), 'proxy', 'proxy_pw')];
$executes = function () use ($db) {
    $n = 0;
    foreach ($db as $d) $n += (int)$d->query("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'")->fetch(PDO::FETCH_NUM)[1];
    return $n;
};
$before = $executes();
$base = random_int(0, (1 << 40) - 1) * 16 + (1 << 50);
$created = '2025-03-14 15:09:26.535';

$insert = $proxy->prepare('INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status, created_at)'
    . ' VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
$convs = [];
for ($k = 0; $k < 16; $k++) $convs[] = $base + ($k * 9) % 16;
foreach ($convs as $conv) {
    $insert->bindValue(1, $conv, PDO::PARAM_INT);
    $insert->bindValue(2, 1, PDO::PARAM_INT);
    $insert->bindValue(3, $conv % 100000, PDO::PARAM_INT);
    $insert->bindValue(4, 42, PDO::PARAM_INT);
    $insert->bindValue(5, 1, PDO::PARAM_INT);
    $insert->bindValue(6, "\x00" . chr($conv % 256) . "\xff", PDO::PARAM_LOB);
    $insert->bindValue(7, 0, PDO::PARAM_INT);
    $insert->bindValue(8, $created, PDO::PARAM_STR);
    $insert->execute();
    check($insert->rowCount() === 1, "insert $conv");
}
foreach ($convs as $conv) {
    $shard = $conv % 16;
    $b = $shard < 8 ? 0 : 1;
    $n = (int)$db[$b]->query(sprintf('SELECT COUNT(*) FROM msg_%02d WHERE conv_id = %d', $shard, $conv))->fetchColumn();
    check($n === 1, "conv $conv: db$b.msg_$shard has $n rows, want 1");
}
$read = $proxy->prepare('SELECT seq, content, created_at FROM msg WHERE conv_id = ?');
foreach ($convs as $conv) {
    $read->execute([$conv]);
    $rows = $read->fetchAll(PDO::FETCH_NUM);
    check(count($rows) === 1 && $rows[0][0] === 1 && $rows[0][1] === "\x00" . chr($conv % 256) . "\xff"
        && $rows[0][2] === $created, "read $conv: " . json_encode(array_map('bin2hex', array_map('strval', $rows[0] ?? []))));
}
for ($s = 2; $s <= 4; $s++) {
    $insert->bindValue(1, $base + 5, PDO::PARAM_INT);
    $insert->bindValue(2, $s, PDO::PARAM_INT);
    $insert->bindValue(3, 900000 + $s, PDO::PARAM_INT);
    $insert->execute();
}
$agg = $proxy->prepare('SELECT COUNT(*), SUM(seq), MAX(seq) FROM msg WHERE conv_id = ?');
$agg->execute([$base + 5]);
$row = $agg->fetch(PDO::FETCH_NUM);
check((int)$row[0] === 4 && (int)$row[1] === 10 && (int)$row[2] === 4, 'aggregate on one shard: ' . json_encode($row));
$update = $proxy->prepare('UPDATE msg SET status = ? WHERE conv_id = ? AND seq >= ?');
$update->execute([2, $base + 5, 2]);
check($update->rowCount() === 3, 'update count ' . $update->rowCount());

// tg_channel_message with month bounds as parameters.
$peer = random_int(1000000000, 1999999999);
$tg = $proxy->prepare('INSERT INTO tg_channel_message (peer_id, message_id, message_month, message_time, text_body,'
    . ' ingested_at) VALUES (?, ?, ?, ?, ?, ?)');
$tg->execute([$peer, 5, '2025-03-01', $created, "hello from php \u{2713}", $created]);
check($tg->rowCount() === 1, 'tg insert');
$tgRead = $proxy->prepare('SELECT text_body FROM tg_channel_message WHERE peer_id = ? AND message_month >= ? AND message_month < ?');
$tgRead->execute([$peer, '2025-01-01', '2025-06-01']);
check($tgRead->fetchAll(PDO::FETCH_COLUMN) === ["hello from php \u{2713}"], 'tg read');
$tgShard = (int)$db[0]->query("SELECT CRC32(CONCAT('channel:', $peer)) % 64 DIV 16")->fetchColumn();
$tgTable = sprintf('tg_channel_message_s%02d', $tgShard);
check((int)$db[intdiv($tgShard, 2)]->query("SELECT COUNT(*) FROM $tgTable WHERE peer_id = $peer")->fetchColumn() === 1,
    "tg row in $tgTable");

// Refusals, then the same connection and statements keep working.
$keyUpdate = $proxy->prepare('UPDATE msg SET conv_id = ? WHERE conv_id = ?');
check(errorCode(fn() => $keyUpdate->execute([$base + 1, $base])) === 9110, 'key update refused with 9110');
$noKey = $proxy->prepare('DELETE FROM msg WHERE (conv_id = ? OR 1 = 1) AND seq = 0');
check(errorCode(fn() => $noKey->execute([$base])) === 9101, 'missing key refused with 9101');
check(errorCode(fn() => $tgRead->execute([$peer, '2024-01-01', '2025-06-01'])) === 9106, '17-month span refused with 9106');
// A NULL bound (message_month < NULL) matches no row: an empty result, not an error.
$tgRead->execute([$peer, '2025-01-01', null]);
check($tgRead->fetchAll() === [], 'NULL month bound gives no rows');
$read->bindValue(1, -5, PDO::PARAM_INT);
check(errorCode(fn() => $read->execute()) === 9104, 'negative integer key refused with 9104');
// PDO sends execute([...]) values as strings: '-5' is not an exact unsigned key.
check(errorCode(fn() => $read->execute(['-5'])) === 9103, "negative key as text refused with 9103");
$read->execute([$base]);
check($read->fetch(PDO::FETCH_NUM)[0] === 1, 'read after refusals');

$del = $proxy->prepare('DELETE FROM msg WHERE conv_id = ?');
$deleted = 0;
foreach ($convs as $conv) {
    $del->execute([$conv]);
    $deleted += $del->rowCount();
}
check($deleted === 19, "deleted $deleted rows, want 19");
$db[intdiv($tgShard, 2)]->exec("DELETE FROM $tgTable WHERE peer_id = $peer");
$n = $executes() - $before;
check($n >= 30, "only $n COM_STMT_EXECUTE reached the backends");
echo "php: $n COM_STMT_EXECUTE on the backends\n";
echo "$passed passed, $failed failed\n";
exit($failed === 0 ? 0 : 1);
