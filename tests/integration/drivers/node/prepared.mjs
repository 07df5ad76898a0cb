// mysql2 (Node.js) through the proxy: server-side prepared statements
// (execute), text queries (query), a connection pool under concurrency, and
// transactions. Routed writes on msg and tg_channel_message with placement
// checked directly on the backends (conv_id % 16; shards 0-7 on db0), reads
// back, statements spanning shards (IN lists, COUNT/SUM, an expression over
// aggregates, ORDER BY ... LIMIT ?), refusals that leave the session usable.
// Run by ../run_node.sh (npm ci, then node prepared.mjs).
import mysql from 'mysql2/promise';

const env = (name, fallback) => process.env[name] || fallback;
let passed = 0;
let failed = 0;
function check(ok, what) {
  if (ok) passed++;
  else {
    failed++;
    console.log(`FAIL: ${what}`);
  }
}
async function refusal(promise) {
  try {
    await promise;
    return 0;
  } catch (e) {
    return e.errno ?? -1;
  }
}

const common = { host: '127.0.0.1', supportBigNumbers: true, bigNumberStrings: true, dateStrings: true };
const proxyOptions = { ...common, port: Number(env('SP_PROXY_PORT', '16033')), user: 'app', password: 'app_pw', database: 'im' };
const proxy = await mysql.createConnection(proxyOptions);
const db = await Promise.all([env('SP_DB0_PORT', '3307'), env('SP_DB1_PORT', '3308')].map((port) =>
  mysql.createConnection({ ...common, port: Number(port), user: 'proxy', password: 'proxy_pw', database: 'im' })));
const pad = (n) => String(n).padStart(2, '0');
const backendOf = (shard) => db[shard < 8 ? 0 : 1];
async function stmtExecutes() {
  let total = 0;
  for (const c of db) {
    const [rows] = await c.query("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'");
    total += Number(rows[0].Value);
  }
  return total;
}
const executesBefore = await stmtExecutes();

// Keys as decimal strings: past 2^53 a JavaScript number would round them.
const base = BigInt(Math.floor(Math.random() * 2 ** 40)) * 16n + 2n ** 50n;
const convs = Array.from({ length: 16 }, (_, k) => base + BigInt((k * 3) % 16));
const created = '2025-03-14 15:09:26.535';

// 1. Routed writes, one per shard, prepared.
for (const conv of convs) {
  const [r] = await proxy.execute(
    'INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    [conv.toString(), 1, (conv % 100000n).toString(), 42, 1, Buffer.from([0, Number(conv % 256n), 0xff]), 0, created]);
  check(r.affectedRows === 1, `insert ${conv}: affected ${r.affectedRows}`);
}
for (const conv of convs) {
  const shard = Number(conv % 16n);
  const [rows] = await backendOf(shard).query(`SELECT COUNT(*) AS n FROM msg_${pad(shard)} WHERE conv_id = ${conv}`);
  check(Number(rows[0].n) === 1, `conv ${conv}: msg_${pad(shard)} has ${rows[0].n} rows, want 1`);
}

// 2. Reads by key, prepared and text.
for (const conv of convs) {
  const [rows] = await proxy.execute('SELECT seq, content, created_at FROM msg WHERE conv_id = ?', [conv.toString()]);
  check(rows.length === 1 && Number(rows[0].seq) === 1 &&
        Buffer.compare(rows[0].content, Buffer.from([0, Number(conv % 256n), 0xff])) === 0 &&
        rows[0].created_at === created, `read ${conv}: ${JSON.stringify(rows)}`);
}
const [textRows] = await proxy.query('SELECT seq FROM msg WHERE conv_id = ?', [convs[3].toString()]);
check(textRows.length === 1 && Number(textRows[0].seq) === 1, `text read: ${JSON.stringify(textRows)}`);

// 3. Statements spanning shards, prepared: IN lists, aggregates, an expression, ORDER BY ... LIMIT ?.
const four = convs.slice(0, 4).map(String);
const [agg] = await proxy.execute(
  'SELECT COUNT(*) AS n, SUM(seq) AS s, COUNT(*) * 2 AS d, SUM(seq) / COUNT(*) AS a FROM msg WHERE conv_id IN (?, ?, ?, ?)', four);
check(agg.length === 1 && String(agg[0].n) === '4' && String(agg[0].s) === '4' && String(agg[0].d) === '8' &&
      String(agg[0].a) === '1.0000', `scatter aggregate: ${JSON.stringify(agg)}`);
const [top] = await proxy.execute(
  'SELECT conv_id FROM msg WHERE conv_id IN (?, ?, ?, ?) ORDER BY conv_id DESC LIMIT ?', [...four, 2]);
const sorted = convs.slice(0, 4).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
check(top.length === 2 && String(top[0].conv_id) === sorted[0].toString() && String(top[1].conv_id) === sorted[1].toString(),
      `scatter ORDER BY LIMIT ?: ${JSON.stringify(top)}`);

// 4. The largest unsigned key goes to msg_15 on db1. mysql2 binds a BigInt or a
// string as a string: MariaDB stores it exactly and compares it with the
// column as DECIMAL (exactly), so it routes both ways; past 2^64-1 it is refused.
const maxKey = '18446744073709551615';
await proxy.execute('INSERT INTO msg (conv_id, seq, msg_id, sender_uid, content) VALUES (?, ?, ?, ?, ?)',
  [maxKey, base.toString(), (base + 7n).toString(), 42, Buffer.from('max')]);
const [maxRows] = await db[1].query(`SELECT content FROM msg_15 WHERE conv_id = ${maxKey} AND seq = ${base}`);
check(maxRows.length === 1 && maxRows[0].content.toString() === 'max', `max key: ${JSON.stringify(maxRows)}`);
const [maxByString] = await proxy.execute('SELECT content FROM msg WHERE conv_id = ? AND seq = ?', [maxKey, base.toString()]);
check(maxByString.length === 1 && maxByString[0].content.toString() === 'max', `max key by string: ${JSON.stringify(maxByString)}`);
const tooBig = await refusal(proxy.execute('SELECT content FROM msg WHERE conv_id = ?', ['18446744073709551616']));
check(tooBig === 9103, `key past 2^64-1: error ${tooBig}, want 9103 (bad_key_value)`);
const [maxRead] = await proxy.query(`SELECT content FROM msg WHERE conv_id = ${maxKey} AND seq = ?`, [base.toString()]);
check(maxRead.length === 1 && maxRead[0].content.toString() === 'max', `max key read: ${JSON.stringify(maxRead)}`);

// 5. tg_channel_message: month bounds as parameters; the row lands on its CRC32 shard.
const peer = 1000000000 + Math.floor(Math.random() * 1000000000);
await proxy.execute(
  'INSERT INTO tg_channel_message (peer_id, message_id, message_month, message_time, text_body, ingested_at) VALUES (?, ?, ?, ?, ?, ?)',
  [peer, 5, '2025-03-01', created, 'hello from node \u2713', created]);
const [tg] = await proxy.execute(
  'SELECT text_body FROM tg_channel_message WHERE peer_id = ? AND message_month BETWEEN ? AND ?', [peer, '2025-01-01', '2025-06-01']);
check(tg.length === 1 && tg[0].text_body === 'hello from node \u2713', `tg read: ${JSON.stringify(tg)}`);
const [crc] = await db[0].query('SELECT CRC32(CONCAT(\'channel:\', ?)) % 64 DIV 16 AS s', [peer]);
const tgShard = Number(crc[0].s);
const [tgFound] = await db[Math.floor(tgShard / 2)].query(`SELECT COUNT(*) AS n FROM tg_channel_message_s${pad(tgShard)} WHERE peer_id = ${peer}`);
check(Number(tgFound[0].n) === 1, `tg row not in tg_channel_message_s${pad(tgShard)}`);

// 6. Refusals with their documented codes; the session goes on.
check(await refusal(proxy.execute('UPDATE msg SET conv_id = ? WHERE conv_id = ?', [(base + 1n).toString(), base.toString()])) === 9110,
      'key update refused with 9110');
check(await refusal(proxy.execute('SELECT * FROM msg WHERE seq = ?', [1])) === 9101, 'missing key refused with 9101');
check(await refusal(proxy.execute('SELECT text_body FROM tg_channel_message WHERE peer_id = ? AND message_month >= ?',
                                  [peer, '2025-03-01'])) === 9105, 'missing month bound refused with 9105');
const [after] = await proxy.execute('SELECT seq FROM msg WHERE conv_id = ?', [base.toString()]);
check(after.length === 1, 'read after refusals');

// 7. Transactions: a rollback leaves nothing on the backend, a commit keeps the row.
const txKey = convs[5];
const txShard = Number(txKey % 16n);
await proxy.beginTransaction();
await proxy.execute('INSERT INTO msg (conv_id, seq, msg_id, sender_uid, content) VALUES (?, 2, ?, 1, ?)',
  [txKey.toString(), (base + 777n).toString(), 'tx']);
await proxy.rollback();
let [tx] = await backendOf(txShard).query(`SELECT COUNT(*) AS n FROM msg_${pad(txShard)} WHERE conv_id = ${txKey} AND seq = 2`);
check(Number(tx[0].n) === 0, `rolled back row still there (${tx[0].n})`);
await proxy.beginTransaction();
await proxy.execute('INSERT INTO msg (conv_id, seq, msg_id, sender_uid, content) VALUES (?, 2, ?, 1, ?)',
  [txKey.toString(), (base + 778n).toString(), 'tx']);
await proxy.commit();
[tx] = await backendOf(txShard).query(`SELECT COUNT(*) AS n FROM msg_${pad(txShard)} WHERE conv_id = ${txKey} AND seq = 2`);
check(Number(tx[0].n) === 1, `committed row missing (${tx[0].n})`);

// 8. A pool under concurrency: 400 prepared reads over 8 connections, each answer its own key's.
const pool = mysql.createPool({ ...proxyOptions, connectionLimit: 8 });
const reads = await Promise.all(Array.from({ length: 400 }, async (_, i) => {
  const conv = convs[i % convs.length];
  const [rows] = await pool.execute('SELECT conv_id, seq FROM msg WHERE conv_id = ? AND seq = 1', [conv.toString()]);
  return rows.length === 1 && String(rows[0].conv_id) === conv.toString();
}));
check(reads.every(Boolean), `pool reads: ${reads.filter((x) => !x).length} of 400 wrong`);
await pool.end();

// Clean up through the proxy, prepared, and count.
let deleted = 0;
for (const conv of convs) {
  const [r] = await proxy.execute('DELETE FROM msg WHERE conv_id = ?', [conv.toString()]);
  deleted += r.affectedRows;
}
const [rm] = await proxy.execute('DELETE FROM msg WHERE conv_id = ? AND seq = ?', [maxKey, base.toString()]);
deleted += rm.affectedRows;
check(deleted === 16 + 1 + 1, `deleted ${deleted} rows, want 18`);
await db[Math.floor(tgShard / 2)].query(`DELETE FROM tg_channel_message_s${pad(tgShard)} WHERE peer_id = ${peer}`);

const executes = (await stmtExecutes()) - executesBefore;
check(executes >= 30, `only ${executes} COM_STMT_EXECUTE reached the backends: not server-side prepared?`);
console.log(`node: ${executes} COM_STMT_EXECUTE on the backends`);
console.log(`${passed} passed, ${failed} failed`);
await proxy.end();
await Promise.all(db.map((c) => c.end()));
process.exit(failed === 0 ? 0 : 1);
