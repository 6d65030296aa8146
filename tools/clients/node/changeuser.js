'use strict';

// changeuser.js drives Node's mysql2 driver through one connection the way
// an application that reuses connections does: user variables, prepared
// statements, a table, then COM_CHANGE_USER (mysql2's changeUser) to the
// same user, to another user with another database and charset and back,
// then COM_RESET_CONNECTION (mysql2's reset). Before each change it leaves
// the session dirty (a user variable, sql_mode, the isolation level,
// autocommit off with a transaction open); after it, it reads the session
// back with many statements, so that a proxy that spreads them over
// several server sessions shows every one of them.
//
// It prints one JSON object: {"driver", "version", "server_version", "ok",
// "checks": [...]}, where each check is {"name", "ok", "got", "want"} or
// {"name", "ok", "error"}, and exits 1 when a check failed, 2 when the run
// broke off.
//
// Every statement carries the comment /* <marker>-<as>-<step>-<n> */, where
// <as> is u2 while the session is user2's and u1 otherwise, so the caller
// can find where and as whom each one ran in the server's statement log.
//
//   node changeuser.js --host H --port P --user U --password PW \
//     --database DB --user2 U2 --password2 PW2 --database2 DB2 \
//     --table kv --id 7 --marker m1 [--repeat 12]
//
// The table must have columns (id INT PRIMARY KEY, v VARCHAR); the run
// writes the row with the given id and leaves it deleted. user2 needs
// access to both databases.

const { parseArgs } = require('node:util');
const mysql = require('mysql2/promise');
const driverVersion = require('mysql2/package.json').version;

const { values: opt } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    user: { type: 'string' },
    password: { type: 'string', default: '' },
    database: { type: 'string' },
    user2: { type: 'string' },
    password2: { type: 'string', default: '' },
    database2: { type: 'string' },
    table: { type: 'string', default: 'kv' },
    id: { type: 'string', default: '1' },
    marker: { type: 'string', default: 'mysql2' },
    repeat: { type: 'string', default: '12' },
  },
});
for (const k of ['port', 'user', 'database', 'user2', 'database2']) {
  if (!opt[k]) {
    process.stderr.write(`changeuser.js: --${k} is required\n`);
    process.exit(2);
  }
}
const repeat = Number(opt.repeat);
const rowID = Number(opt.id);

const checks = [];
let serverVersion = '';

// same compares as JSON.
function same(got, want) {
  return JSON.stringify(got) === JSON.stringify(want);
}

// check records whether got equals want.
function check(name, got, want) {
  const ok = same(got, want);
  checks.push({ name, ok, got, want });
  return ok;
}

// user@host of CURRENT_USER() for an account created as 'name'@'%'.
function account(name) {
  return name.split('@')[0] + '@%';
}

let step = 0;
let as = 'u1';

// tag returns the comment that marks one statement.
function tag(n) {
  return `/* ${opt.marker}-${as}-${step}-${n} */`;
}

// rowsOf runs a text-protocol query and returns its rows as arrays of
// strings (null for NULL).
async function rowsOf(conn, sql) {
  const [rows] = await conn.query({ sql, rowsAsArray: true });
  return rows.map((r) => r.map((v) => (v === null ? null : String(v))));
}

// readBack runs sql repeat times and checks that every run returned want.
async function readBack(conn, name, sql, want) {
  step++;
  for (let i = 0; i < repeat; i++) {
    const got = await rowsOf(conn, `${sql} ${tag(i)}`);
    if (!same(got, want)) {
      return check(`${name} (statement ${i + 1} of ${repeat})`, got, want);
    }
  }
  return check(name, want, want);
}

// prepared runs a server-side prepared statement (COM_STMT_PREPARE and
// COM_STMT_EXECUTE) repeat times.
async function prepared(conn, name) {
  step++;
  for (let i = 0; i < repeat; i++) {
    const [rows] = await conn.execute({ sql: `SELECT ? + 1 AS n ${tag(i)}`, rowsAsArray: true }, [i]);
    const got = String(rows[0][0]);
    if (got !== String(i + 1)) {
      return check(`${name} (execution ${i + 1} of ${repeat})`, got, String(i + 1));
    }
  }
  return check(name, repeat, repeat);
}

// tableRoundTrip writes the row, reads it back repeat times and deletes it.
async function tableRoundTrip(conn, name, value) {
  step++;
  const t = mysql.escapeId(opt.table);
  await conn.execute(`DELETE FROM ${t} WHERE id = ? ${tag('d')}`, [rowID]);
  await conn.execute(`INSERT INTO ${t} (id, v) VALUES (?, ?) ${tag('i')}`, [rowID, value]);
  for (let i = 0; i < repeat; i++) {
    const got = await rowsOf(conn, `SELECT v FROM ${t} WHERE id = ${rowID} ${tag(i)}`);
    if (!same(got, [[value]])) {
      return check(`${name} (read ${i + 1} of ${repeat})`, got, [[value]]);
    }
  }
  const ok = check(name, [[value]], [[value]]);
  await conn.execute(`DELETE FROM ${t} WHERE id = ? ${tag('d2')}`, [rowID]);
  return ok;
}

// attempt runs one action and records its failure as a check.
async function attempt(name, f) {
  try {
    await f();
    return true;
  } catch (err) {
    checks.push({ name, ok: false, error: `${err.code || ''} ${err.errno || ''} ${err.message}`.trim() });
    return false;
  }
}

async function run() {
  const conn = await mysql.createConnection({
    host: opt.host,
    port: Number(opt.port),
    user: opt.user,
    password: opt.password,
    database: opt.database,
    connectTimeout: 10000,
  });
  serverVersion = conn.connection._handshakePacket.serverVersion;
  try {
    await steps(conn);
  } finally {
    await conn.end().catch(() => conn.destroy());
  }
}

// sessionVars are the session variables the run changes before each
// change of user and the reset, and expects back at their defaults after.
// Of sql_mode only ANSI_QUOTES is read: the flags a login adds (mysql2
// asks for IGNORE_SPACE) are not all restored by COM_RESET_CONNECTION.
const sessionVars = "SELECT FIND_IN_SET('ANSI_QUOTES', @@sql_mode), @@tx_isolation, @@autocommit, @@collation_connection";

// dirty changes the session: a user variable, session variables, and
// autocommit off with a transaction open.
async function dirty(conn, v) {
  step++;
  await conn.query(`SET @v = '${v}' ${tag(0)}`);
  await conn.query(`SET SESSION sql_mode = 'ANSI_QUOTES', SESSION tx_isolation = 'SERIALIZABLE' ${tag(1)}`);
  await conn.query(`SET autocommit = 0 ${tag(2)}`);
  await conn.query(`SELECT COUNT(*) FROM ${mysql.escapeId(opt.database)}.${mysql.escapeId(opt.table)} ${tag(3)}`);
}

async function steps(conn) {
  const u1 = account(opt.user);
  const u2 = account(opt.user2);
  const who = 'SELECT CURRENT_USER(), DATABASE(), @v';

  step++;
  const [defaults] = await rowsOf(conn, `${sessionVars} ${tag(0)}`);
  const [sqlMode, isolation, , collation] = defaults;
  check('login: autocommit', defaults[2], '1');
  await conn.query(`SET @v = 'before' ${tag(1)}`);
  await readBack(conn, 'login: user, database and @v', who, [[u1, opt.database, 'before']]);
  await prepared(conn, 'login: prepared statement');
  await tableRoundTrip(conn, 'login: table', 'from-login');

  // The same user: mysql2 sends the login's user, password, database and
  // charset.
  await dirty(conn, 'before-same');
  if (await attempt('changeUser to the same user', () => conn.changeUser({}))) {
    await readBack(conn, 'same user: user, database, @v gone', who, [[u1, opt.database, null]]);
    await readBack(conn, 'same user: session variables', sessionVars, [[sqlMode, isolation, '1', collation]]);
    await prepared(conn, 'same user: prepared statement');
  }

  await dirty(conn, 'before-user2');
  if (await attempt('changeUser to user2 with database2 and latin1', () =>
    conn.changeUser({ user: opt.user2, password: opt.password2, database: opt.database2, charset: 'LATIN1_SWEDISH_CI' }))) {
    as = 'u2';
    await readBack(conn, 'user2: user, database, @v gone', who, [[u2, opt.database2, null]]);
    await readBack(conn, 'user2: session variables', sessionVars, [[sqlMode, isolation, '1', 'latin1_swedish_ci']]);
    await prepared(conn, 'user2: prepared statement');
  }

  await dirty(conn, 'before-back');
  if (await attempt('changeUser back to user with database and charset', () =>
    conn.changeUser({ user: opt.user, password: opt.password, database: opt.database, charset: collation }))) {
    as = 'u1';
    await readBack(conn, 'back: user, database, @v gone', who, [[u1, opt.database, null]]);
    await readBack(conn, 'back: session variables', sessionVars, [[sqlMode, isolation, '1', collation]]);
    await tableRoundTrip(conn, 'back: table', 'after-change');
  }

  await dirty(conn, 'before-reset');
  await readBack(conn, 'before reset: session as dirty left it', `${who}, @@autocommit`, [[u1, opt.database, 'before-reset', '0']]);
  if (await attempt('reset (COM_RESET_CONNECTION)', () => conn.reset())) {
    await readBack(conn, 'reset: user, database, @v gone', who, [[u1, opt.database, null]]);
    await readBack(conn, 'reset: session variables', sessionVars, [[sqlMode, isolation, '1', collation]]);
    await prepared(conn, 'reset: prepared statement');
    await tableRoundTrip(conn, 'reset: table', 'after-reset');
    step++;
    const t = mysql.escapeId(opt.table);
    await conn.beginTransaction();
    await conn.query(`INSERT INTO ${t} (id, v) VALUES (${rowID}, 'rolled-back') ${tag('i')}`);
    await conn.rollback();
    check('reset: a rolled-back insert is gone', await rowsOf(conn, `SELECT COUNT(*) FROM ${t} WHERE id = ${rowID} ${tag(0)}`), [['0']]);
  }
}

run().then(
  () => {
    const ok = checks.length > 0 && checks.every((c) => c.ok);
    process.stdout.write(JSON.stringify({ driver: 'mysql2', version: driverVersion, server_version: serverVersion, ok, checks }) + '\n');
    process.exit(ok ? 0 : 1);
  },
  (err) => {
    checks.push({ name: 'run', ok: false, error: `${err.code || ''} ${err.errno || ''} ${err.message}`.trim() });
    process.stdout.write(JSON.stringify({ driver: 'mysql2', version: driverVersion, server_version: serverVersion, ok: false, checks }) + '\n');
    process.exit(2);
  },
);
