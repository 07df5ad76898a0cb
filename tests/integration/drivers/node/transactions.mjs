// mysql2 (Node.js): transactions through the proxy (issue 11).
// Read-your-write inside beginTransaction() with server-side prepared
// statements (execute) and with text statements (query), on a shard of db1 and
// one of db0, then rollback() (row gone) and commit() (row visible from another
// connection and on the backend); autocommit off by text spellings (mysql2 has
// no autocommit option), then ROLLBACK; a multi-row INSERT spanning both
// backends under autocommit off: OK and part of the transaction, or refused;
// never OK then lost. Rows: conv_id 9_100_080 + shard (shard 2 on db0, 9 on db1).
// SP_TX_DIRECT=1 runs the same against MariaDB itself (db0, database im_txref
// with an unsharded msg). Run by ../run_node.sh transactions.
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
const errText = (e) => `ERROR ${e.errno ?? '?'}: ${e.sqlMessage ?? e.message}`;

const DIRECT = process.env.SP_TX_DIRECT === '1';
const common = { host: '127.0.0.1', supportBigNumbers: true, bigNumberStrings: true };
const backendOptions = (port, database) => ({ ...common, port: Number(port), user: 'root', password: 'root_pw', database });
const targetOptions = DIRECT
  ? backendOptions(env('SP_DB0_PORT', '3307'), 'im_txref')
  : { ...common, port: Number(env('SP_PROXY_PORT', '16033')), user: 'app', password: 'app_pw', database: 'im' };
const target = () => mysql.createConnection(targetOptions);

const CONV_BASE = 9_100_080; // % 16 == 0
const DB0_CONV = CONV_BASE + 2;
const DB1_CONV = CONV_BASE + 9;
const SPAN = [CONV_BASE + 3, CONV_BASE + 12, CONV_BASE + 5, CONV_BASE + 14]; // db0, db1, db0, db1
const INSERT = 'INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES (?, ?, ?, 77, 1, ?, 0)';
const SELECT = 'SELECT seq, content FROM msg WHERE conv_id = ? AND seq = ?';

const seqBase = (1_000_000 + Math.floor(Math.random() * 999_000_000)) * 1000;
let counter = 0;
function nextRow(conv) {
  counter++;
  const seq = seqBase + counter;
  return { conv, seq, msgId: conv * 1000 + counter, content: `node-${conv}-${seq}` };
}

const backend = await Promise.all([env('SP_DB0_PORT', '3307'), env('SP_DB1_PORT', '3308')].map((port) =>
  mysql.createConnection(backendOptions(port, 'im'))));
if (DIRECT) {
  await backend[0].query('CREATE DATABASE IF NOT EXISTS im_txref');
  await backend[0].query('CREATE TABLE IF NOT EXISTS im_txref.msg LIKE im.msg_00');
  console.log(`node: direct mode, MariaDB on ${env('SP_DB0_PORT', '3307')} database im_txref`);
}
const checker = await target();

// "through another connection,on the backend"
async function counts(r) {
  const [[a]] = await checker.query(`SELECT COUNT(*) AS n FROM msg WHERE conv_id = ${r.conv} AND seq = ${r.seq}`);
  if (DIRECT) return `${a.n},${a.n}`;
  const shard = r.conv % 16;
  const [[b]] = await backend[shard < 8 ? 0 : 1].query(
    `SELECT COUNT(*) AS n FROM msg_${String(shard).padStart(2, '0')} WHERE conv_id = ${r.conv} AND seq = ${r.seq}`);
  return `${a.n},${b.n}`;
}
async function expectCount(r, want, when) {
  const got = await counts(r);
  check(got === `${want},${want}`, `${when}: conv_id ${r.conv} seq ${r.seq} (shard ${r.conv % 16}): ${got} rows ` +
    `(through another connection, on the backend), want ${want}`);
}
async function insertRow(c, r, prepared) {
  const [res] = prepared
    ? await c.execute(INSERT, [r.conv, r.seq, r.msgId, Buffer.from(r.content)])
    : await c.query(`INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES ` +
      `(${r.conv}, ${r.seq}, ${r.msgId}, 77, 1, '${r.content}', 0)`);
  if (res.affectedRows !== 1) throw new Error(`insert affected ${res.affectedRows} rows`);
}
async function readBack(c, r, prepared) {
  const [rows] = prepared
    ? await c.execute(SELECT, [r.conv, r.seq])
    : await c.query(`SELECT seq, content FROM msg WHERE conv_id = ${r.conv} AND seq = ${r.seq}`);
  return rows.map((row) => `${row.seq}:${row.content.toString()}`);
}

async function readYourWrite(conv, prepared, commit) {
  const name = `read-your-write prepared=${prepared} commit=${commit} shard ${conv % 16}`;
  const r = nextRow(conv);
  const c = await target();
  try {
    await c.beginTransaction();
    await insertRow(c, r, prepared);
    const got = await readBack(c, r, prepared);
    check(got.length === 1 && got[0] === `${r.seq}:${r.content}`, `${name}: SELECT in the transaction: ${JSON.stringify(got)}`);
    await expectCount(r, 0, `${name}: uncommitted, seen from outside`);
    if (commit) await c.commit();
    else await c.rollback();
  } catch (e) {
    check(false, `${name}: ${errText(e)}`);
    return;
  } finally {
    await c.end();
  }
  await expectCount(r, commit ? 1 : 0, `${name}: after ${commit ? 'commit()' : 'rollback()'}`);
}

async function autocommitOff(spelling, conv, prepared) {
  const name = `${spelling} (prepared=${prepared}, shard ${conv % 16})`;
  const r = nextRow(conv);
  const c = await target();
  try {
    await c.query(spelling);
    const [[ac]] = await c.query('SELECT @@autocommit AS ac');
    check(Number(ac.ac) === 0, `${name}: @@autocommit is ${ac.ac}`);
    await insertRow(c, r, prepared);
    check((await readBack(c, r, prepared)).length === 1, `${name}: read your write`);
    await expectCount(r, 0, `${name}: uncommitted, seen from outside`);
    await c.query('ROLLBACK');
  } catch (e) {
    check(false, `${name}: ${errText(e)}`);
    return;
  } finally {
    await c.end();
  }
  await expectCount(r, 0, `${name}: after ROLLBACK`);
}

async function spanningInsert(prepared, ending) {
  const name = `multi-backend INSERT under autocommit off (prepared=${prepared}) then ${ending}`;
  const rows = SPAN.map(nextRow);
  const values = rows.map((r) => (prepared ? "(?, ?, ?, 77, 1, 'span', 0)" : `(${r.conv}, ${r.seq}, ${r.msgId}, 77, 1, 'span', 0)`));
  const sql = `INSERT INTO msg (conv_id, seq, msg_id, sender_uid, msg_type, content, status) VALUES ${values.join(', ')}`;
  let outcome = 'OK';
  let want = 0;
  const c = await target();
  try {
    await c.query('SET autocommit=0');
    const [res] = prepared ? await c.execute(sql, rows.flatMap((r) => [r.conv, r.seq, r.msgId])) : await c.query(sql);
    check(res.affectedRows === rows.length, `${name}: affected ${res.affectedRows}`);
    await c.query(ending);
    if (ending === 'COMMIT') want = 1;
  } catch (e) {
    outcome = errText(e);
    await c.query('ROLLBACK');
  } finally {
    await c.end();
  }
  console.log(`  ${name}: ${outcome}`);
  for (const r of rows) await expectCount(r, want, `${name} (${outcome})`);
}

async function cleanup() {
  const c = await target();
  for (const conv of [DB0_CONV, DB1_CONV, ...SPAN]) await c.query(`DELETE FROM msg WHERE conv_id = ${conv}`);
  await c.end();
}

await cleanup();
try {
  for (const conv of [DB1_CONV, DB0_CONV]) {
    for (const prepared of [true, false]) {
      await readYourWrite(conv, prepared, false);
      await readYourWrite(conv, prepared, true);
    }
  }
  for (const conv of [DB1_CONV, DB0_CONV]) {
    for (const prepared of [true, false]) {
      for (const spelling of ['SET autocommit=false', "SET SESSION autocommit = 'off'", 'SET @@autocommit = FALSE']) {
        await autocommitOff(spelling, conv, prepared);
      }
    }
  }
  for (const prepared of [true, false]) {
    await spanningInsert(prepared, 'ROLLBACK');
    await spanningInsert(prepared, 'COMMIT');
    await cleanup();
  }
} catch (e) {
  check(false, `unexpected: ${e.stack ?? e}`);
} finally {
  await cleanup();
  await checker.end();
  for (const b of backend) await b.end();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
