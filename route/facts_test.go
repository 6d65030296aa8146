package route

import (
	"strings"
	"testing"
)

// factsSummary is Facts in a comparable form: tables as "db.name|name".
type factsSummary struct {
	kind       StmtKind
	second     string
	tables     string
	more       bool
	rc         Consistency
	timeout    int64
	txn        TxnOp
	chain      bool
	release    bool
	onePhase   bool
	plain      bool
	txnRO      bool
	pins       Pin
	multi      bool
	ro         bool
	kill       KillInfo
	incomplete bool
	target     string
}

func summarize(f Facts) factsSummary {
	var b strings.Builder
	for i := 0; i < f.NumTables; i++ {
		if i > 0 {
			b.WriteByte('|')
		}
		if len(f.Tables[i].DB) > 0 {
			b.Write(f.Tables[i].DB)
			b.WriteByte('.')
		}
		b.Write(f.Tables[i].Name)
	}
	return factsSummary{
		kind: f.Kind, second: f.Second, tables: b.String(), more: f.MoreTables,
		rc: f.ReadConsistency, timeout: f.QueryTimeout,
		txn: f.Txn, chain: f.Chain, release: f.Release, onePhase: f.OnePhase,
		plain: f.PlainBegin, txnRO: f.TxnReadOnly, pins: f.Pins,
		multi: f.MultiStatement, ro: f.ReadOnly, kill: f.Kill, incomplete: f.Incomplete,
		target: string(f.TargetDBServer),
	}
}

type factsCase struct {
	sql  string
	want factsSummary
}

// Every field of the summary is compared: a field left out of want must
// be zero.
var factsCases = []factsCase{
	// Reads and what spoils them.
	{"select 1", factsSummary{kind: StmtSelect, ro: true}},

	// ODP's routing comment.
	{"/* TARGET_DB_SERVER = '127.0.0.1:2881' */ select 1", factsSummary{kind: StmtSelect, ro: true, target: "127.0.0.1:2881"}},
	{"/*target_db_server=\"10.0.0.1:2881,10.0.0.2:2881\"*/select 1", factsSummary{kind: StmtSelect, ro: true, target: "10.0.0.1:2881,10.0.0.2:2881"}},
	{"select /* TARGET_DB_SERVER=1.2.3.4:5 */ 1", factsSummary{kind: StmtSelect, ro: true, target: "1.2.3.4:5"}},
	{"/* x */ /* TARGET_DB_SERVER='a:1' */ /* TARGET_DB_SERVER='b:2' */ select 1", factsSummary{kind: StmtSelect, ro: true, target: "a:1"}},
	{"/*+ TARGET_DB_SERVER='a:1' */ select 1", factsSummary{kind: StmtSelect, ro: true}},
	{"/* MY_TARGET_DB_SERVER='a:1' */ select 1", factsSummary{kind: StmtSelect, ro: true}},
	{"/* TARGET_DB_SERVER = '' */ select 1", factsSummary{kind: StmtSelect, ro: true}},
	{"/* TARGET_DB_SERVER = 'a:1 */ select 1", factsSummary{kind: StmtSelect, ro: true}},
	{"select a, /* TARGET_DB_SERVER='a:1' */ b from t", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"/* TARGET_DB_SERVER='a:1' */ select 'x", factsSummary{kind: StmtSelect, target: "a:1", incomplete: true}},
	{"SELECT c FROM sbtest1 WHERE id=4921", factsSummary{kind: StmtSelect, tables: "sbtest1", ro: true}},
	{"/* c */ ((select 1))", factsSummary{kind: StmtSelect, ro: true}},
	{"select * from t where a = ?", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"SELECT x'4142', b'01', N'abc', 0x41, _utf8mb4'x', 1.5e3", factsSummary{kind: StmtSelect, ro: true}},
	{"select * from t for update", factsSummary{kind: StmtSelect, tables: "t"}},
	{"select * from t where b = 'x' for update nowait", factsSummary{kind: StmtSelect, tables: "t"}},
	{"select * from t for share", factsSummary{kind: StmtSelect, tables: "t"}},
	{"select * from t lock in share mode", factsSummary{kind: StmtSelect, tables: "t"}},
	{"select 1 into outfile '/tmp/x'", factsSummary{kind: StmtSelect}},
	{"select 1 into dumpfile '/tmp/x'", factsSummary{kind: StmtSelect}},
	{"select a into @x from t", factsSummary{kind: StmtSelect, tables: "t"}},
	{"select @x := 1", factsSummary{kind: StmtSelect}},
	{"select @x = 1", factsSummary{kind: StmtSelect, ro: true}},
	{"select replace(a, 'x', 'y'), insert(a, 1, 1, 'z') from t", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"select t.update, t.`delete` from t", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"select sleep(1)", factsSummary{kind: StmtSelect, ro: true}},
	{"select nextval(s)", factsSummary{kind: StmtSelect}},
	{"select setval(s, 10)", factsSummary{kind: StmtSelect}},
	{"select next value for s", factsSummary{kind: StmtSelect}},
	{"select s.nextval from dual", factsSummary{kind: StmtSelect}},
	{"select s.currval from dual", factsSummary{kind: StmtSelect, pins: PinSequence}},
	{"select previous value for s", factsSummary{kind: StmtSelect, pins: PinSequence}},
	{"select lastval(s)", factsSummary{kind: StmtSelect, pins: PinSequence}},
	{"show processlist", factsSummary{kind: StmtShow, second: "PROCESSLIST", ro: true}},
	{"show full tables", factsSummary{kind: StmtShow, second: "FULL", ro: true}},
	{"show tables from db", factsSummary{kind: StmtShow, second: "TABLES", ro: true}},
	{"show create table t", factsSummary{kind: StmtShow, ro: true}},
	{"desc t", factsSummary{kind: StmtDesc, tables: "t", ro: true}},
	{"DESCRIBE db.t col", factsSummary{kind: StmtDesc, tables: "db.t", ro: true}},
	{"explain select * from t", factsSummary{kind: StmtExplain, tables: "t", ro: true}},
	{"explain extended select * from t", factsSummary{kind: StmtExplain, tables: "t", ro: true}},
	{"explain format=json select * from t", factsSummary{kind: StmtExplain, tables: "t", ro: true}},
	{"explain update t set a = 1", factsSummary{kind: StmtExplain}},
	{"explain delete from t", factsSummary{kind: StmtExplain, tables: "t"}},
	{"table t", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"values row(1, 2)", factsSummary{kind: StmtSelect, ro: true}},
	{"with c as (select * from t) select * from c", factsSummary{kind: StmtSelect, tables: "t|c", ro: true}},
	{"with c as (select 1) update t set a = 1", factsSummary{kind: StmtSelect, tables: "t"}},
	{"with c as (select 1) delete from t", factsSummary{kind: StmtSelect, tables: "t"}},
	{"ping proxy", factsSummary{kind: StmtPing, second: "PROXY"}},
	{"set names utf8", factsSummary{kind: StmtSet}},
	{"use db", factsSummary{kind: StmtUse}},
	{"call p()", factsSummary{kind: StmtCall}},
	{"--\nselect 1", factsSummary{kind: StmtSelect, ro: true}},
	{"select 1 --\tx", factsSummary{kind: StmtSelect, ro: true}},

	// Functions are names followed by '(' in code only.
	{"select 'LAST_INSERT_ID()'", factsSummary{kind: StmtSelect, ro: true}},
	{`select "found_rows()"`, factsSummary{kind: StmtSelect, ro: true}},
	{"select last_insert_id()", factsSummary{kind: StmtSelect, pins: PinLastResult}},
	{"select LAST_INSERT_ID ( /* c */ )", factsSummary{kind: StmtSelect, pins: PinLastResult}},
	{"select last_insert_id\n-- c\n()", factsSummary{kind: StmtSelect, pins: PinLastResult}},
	{"select `last_insert_id`()", factsSummary{kind: StmtSelect, pins: PinLastResult}},
	{"select last_insert_id(5)", factsSummary{kind: StmtSelect}},
	{"update t set id = last_insert_id(id + 1)", factsSummary{kind: StmtUpdate, tables: "t"}},
	{"select last_insert_id_x() from t", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"select `found_rows` from t", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"select found_rows from t", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"select db.last_insert_id()", factsSummary{kind: StmtSelect, ro: true}},
	{"select found_rows()", factsSummary{kind: StmtSelect, pins: PinLastResult}},
	{"select row_count()", factsSummary{kind: StmtSelect, pins: PinLastResult}},
	{"select 1 union select found_rows()", factsSummary{kind: StmtSelect, pins: PinLastResult}},
	{"select connection_id()", factsSummary{kind: StmtSelect, pins: PinConnID}},
	{"select get_lock('a', 10)", factsSummary{kind: StmtSelect, pins: PinUserLock}},
	{"do get_lock('x', 1)", factsSummary{pins: PinUserLock}},
	{"select release_lock('a')", factsSummary{kind: StmtSelect, pins: PinLockInfo}},
	{"select release_all_locks()", factsSummary{kind: StmtSelect, pins: PinLockInfo}},
	{"select is_used_lock('a')", factsSummary{kind: StmtSelect, pins: PinLockInfo}},
	{"select is_free_lock('a')", factsSummary{kind: StmtSelect, pins: PinLockInfo}},
	{"INSERT INTO get_lock (a) VALUES (1)", factsSummary{kind: StmtInsert, tables: "get_lock"}},
	{"select 1 /* last_insert_id() */", factsSummary{kind: StmtSelect, ro: true}},
	{"select 1 -- found_rows()\n", factsSummary{kind: StmtSelect, ro: true}},
	{"select 1 # row_count()", factsSummary{kind: StmtSelect, ro: true}},
	{"select 'a''b', \"c\"\"d\", 'e\\'f', found_rows()", factsSummary{kind: StmtSelect, pins: PinLastResult}},
	{"select 'it''s' -- found_rows()\n", factsSummary{kind: StmtSelect, ro: true}},
	{"/*!40101 SET @x = LAST_INSERT_ID() */", factsSummary{pins: PinLastResult}},
	{"/*M!100100 select found_rows() */", factsSummary{pins: PinLastResult}},
	{"/*!40101 SET NAMES utf8 */", factsSummary{}},
	{"select /*!40001 SQL_NO_CACHE */ * from t", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"select /*!50000 found_rows() */", factsSummary{kind: StmtSelect, pins: PinLastResult}},
	{"/*! kill 3 */", factsSummary{}},
	{"select /*/ found_rows() */ 1", factsSummary{kind: StmtSelect, ro: true}},
	{"select/**/1/***/", factsSummary{kind: StmtSelect, ro: true}},

	// Diagnostics.
	{"show warnings", factsSummary{kind: StmtShow, pins: PinDiagnostics}},
	{"show errors limit 1", factsSummary{kind: StmtShow, pins: PinDiagnostics}},
	{"show count(*) warnings", factsSummary{kind: StmtShow, pins: PinDiagnostics}},
	{"SHOW COUNT(*) ERRORS", factsSummary{kind: StmtShow, pins: PinDiagnostics}},
	{"select @@warning_count", factsSummary{kind: StmtSelect, pins: PinDiagnostics}},
	{"select @@session.error_count", factsSummary{kind: StmtSelect, pins: PinDiagnostics}},
	{"select @@SESSION.WARNING_COUNT, @@version", factsSummary{kind: StmtSelect, pins: PinDiagnostics}},
	{"select @warning_count, @`error_count`, @'x'", factsSummary{kind: StmtSelect, ro: true}},
	{"get diagnostics @n = number", factsSummary{pins: PinDiagnostics}},
	{"get current diagnostics condition 1 @m = message_text", factsSummary{pins: PinDiagnostics}},

	// Session state on the server.
	{"create temporary table t (a int)", factsSummary{kind: StmtCreate, tables: "t", pins: PinTempTable}},
	{"create or replace temporary table t (a int)", factsSummary{kind: StmtCreate, tables: "t", pins: PinTempTable}},
	{"create global temporary table t (a int)", factsSummary{kind: StmtCreate, tables: "t", pins: PinTempTable}},
	{"create table t (a int)", factsSummary{kind: StmtCreate, tables: "t"}},
	{"create table temporary (a int)", factsSummary{kind: StmtCreate, tables: "temporary"}},
	{"create table if not exists db.t (a int)", factsSummary{kind: StmtCreate, tables: "db.t"}},
	{"drop temporary table t", factsSummary{kind: StmtDrop, tables: "t", pins: PinTempTable}},
	{"drop table if exists a, b", factsSummary{kind: StmtDrop, tables: "a|b"}},
	{"lock tables t read", factsSummary{kind: StmtLock, second: "TABLES", tables: "t", pins: PinLockTables}},
	{"LOCK TABLE t1 READ LOCAL, db.t2 AS x WRITE", factsSummary{kind: StmtLock, tables: "t1|db.t2", pins: PinLockTables}},
	{"unlock tables", factsSummary{kind: StmtUnlock, second: "TABLES", pins: PinUnlock}},
	{"set transaction isolation level read committed", factsSummary{kind: StmtSet, second: "TRANSACTION", pins: PinNextTxn}},
	{"set session transaction read only", factsSummary{kind: StmtSet}},
	{"set global transaction isolation level serializable", factsSummary{kind: StmtSet}},
	{"SET @@session.transaction_isolation = 'READ-COMMITTED'", factsSummary{kind: StmtSet}},
	{"prepare s from 'select 1'", factsSummary{kind: StmtPrepare, pins: PinPrepare}},
	{"PREPARE `s` FROM @q", factsSummary{kind: StmtPrepare, pins: PinPrepare}},
	{"execute s using @a", factsSummary{kind: StmtExecute, pins: PinExecute}},
	{"EXECUTE IMMEDIATE 'select 1'", factsSummary{kind: StmtExecute, pins: PinExecute}},
	{"deallocate prepare s", factsSummary{kind: StmtDeallocate, pins: PinExecute}},
	{"drop prepare s", factsSummary{kind: StmtDrop, pins: PinExecute}},
	{"handler t open", factsSummary{tables: "t", pins: PinHandler}},

	// Transaction control.
	{"begin", factsSummary{kind: StmtBegin, txn: TxnBegin, plain: true}},
	{"BEGIN WORK;", factsSummary{kind: StmtBegin, second: "WORK", txn: TxnBegin, plain: true}},
	{"begin not atomic select 1; end", factsSummary{kind: StmtBegin, multi: true}},
	{"BEGIN; select 1", factsSummary{kind: StmtBegin, txn: TxnBegin, multi: true}},
	{"begin x", factsSummary{kind: StmtBegin}},
	{"start transaction", factsSummary{kind: StmtBegin, second: "TRANSACTION", txn: TxnBegin, plain: true}},
	{"START TRANSACTION READ ONLY", factsSummary{kind: StmtBegin, second: "TRANSACTION", txn: TxnBegin, plain: true, txnRO: true}},
	{"start transaction with consistent snapshot, read write", factsSummary{kind: StmtBegin, second: "TRANSACTION", txn: TxnBegin, plain: true}},
	{"start transaction read only with consistent snapshot", factsSummary{kind: StmtBegin, second: "TRANSACTION"}},
	{"start transaction read", factsSummary{kind: StmtBegin, second: "TRANSACTION"}},
	{"start transaction read only,", factsSummary{kind: StmtBegin, second: "TRANSACTION"}},
	{"start slave", factsSummary{kind: StmtBegin}},
	{"commit", factsSummary{kind: StmtCommit, txn: TxnCommit}},
	{"commit work", factsSummary{kind: StmtCommit, second: "WORK", txn: TxnCommit}},
	{"commit and chain", factsSummary{kind: StmtCommit, txn: TxnCommit, chain: true}},
	{"commit and no chain", factsSummary{kind: StmtCommit, txn: TxnCommit}},
	{"commit release", factsSummary{kind: StmtCommit, txn: TxnCommit, release: true}},
	{"commit foo", factsSummary{kind: StmtCommit}},
	{"rollback work and chain release", factsSummary{kind: StmtRollback, second: "WORK", txn: TxnRollback, chain: true, release: true}},
	{"rollback and no chain no release", factsSummary{kind: StmtRollback, txn: TxnRollback}},
	{"rollback to savepoint s1", factsSummary{kind: StmtRollback, txn: TxnRollbackToSavepoint}},
	{"rollback work to s1", factsSummary{kind: StmtRollback, second: "WORK", txn: TxnRollbackToSavepoint}},
	{"rollback to", factsSummary{kind: StmtRollback}},
	{"release savepoint s1", factsSummary{txn: TxnReleaseSavepoint}},
	{"savepoint s1", factsSummary{txn: TxnSavepoint}},
	{"savepoint `s 1`;", factsSummary{txn: TxnSavepoint}},
	{"xa start 'x'", factsSummary{kind: StmtXA, txn: TxnXAStart, pins: PinXA}},
	{"xa begin 'x' join", factsSummary{kind: StmtXA, txn: TxnXAStart, pins: PinXA}},
	{"XA START 'a', 'b', 1", factsSummary{kind: StmtXA, txn: TxnXAStart, pins: PinXA}},
	{"xa start x'6162', 0x01", factsSummary{kind: StmtXA, txn: TxnXAStart, pins: PinXA}},
	{"xa end 'x'", factsSummary{kind: StmtXA, txn: TxnXAEnd}},
	{"xa end 'x' suspend for migrate", factsSummary{kind: StmtXA, txn: TxnXAEnd}},
	{"xa prepare 'x'", factsSummary{kind: StmtXA, txn: TxnXAPrepare}},
	{"xa commit 'x' one phase", factsSummary{kind: StmtXA, txn: TxnXACommit, onePhase: true}},
	{"xa commit 'x'", factsSummary{kind: StmtXA, txn: TxnXACommit}},
	{"xa rollback 'x'", factsSummary{kind: StmtXA, txn: TxnXARollback}},
	{"xa recover", factsSummary{kind: StmtXA}},
	{"xa commit", factsSummary{kind: StmtXA}},

	// Hints.
	{"select /*+ read_consistency(weak) query_timeout(1000000) */ * from db1.t1 join t2 on t1.a = t2.a",
		factsSummary{kind: StmtSelect, tables: "db1.t1|t2", rc: ConsistencyWeak, timeout: 1000000, ro: true}},
	{"/*+READ_CONSISTENCY(WEAK)*/ select * from t", factsSummary{kind: StmtSelect, tables: "t", rc: ConsistencyWeak, ro: true}},
	{"SELECT /*+ INDEX(t i) READ_CONSISTENCY ( STRONG ) */ * FROM t", factsSummary{kind: StmtSelect, tables: "t", rc: ConsistencyStrong, ro: true}},
	{"select /*+ read_consistency(frozen), read_consistency(weak) */ 1", factsSummary{kind: StmtSelect, rc: ConsistencyFrozen, ro: true}},
	{"(select /*+ read_consistency(weak) */ 1)", factsSummary{kind: StmtSelect, rc: ConsistencyWeak, ro: true}},
	{"insert /*+ query_timeout(5) */ into t values (1)", factsSummary{kind: StmtInsert, tables: "t", timeout: 5}},
	{"select * from t /*+ read_consistency(weak) */", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"select /* read_consistency(weak) */ 1", factsSummary{kind: StmtSelect, ro: true}},
	{"select '/*+ read_consistency(weak) */'", factsSummary{kind: StmtSelect, ro: true}},
	{"select 1; select /*+ read_consistency(weak) */ 2", factsSummary{kind: StmtSelect, multi: true}},
	{"select /*+ query_timeout(abc) */ 1", factsSummary{kind: StmtSelect, ro: true}},
	{"select /*+ query_timeout(99999999999999999999) */ 1", factsSummary{kind: StmtSelect, ro: true}},
	{"select /*+ query_timeout(-5) read_consistency(weak */ 1", factsSummary{kind: StmtSelect, ro: true}},

	// Tables.
	{"select * from `my db`.`t``1`", factsSummary{kind: StmtSelect, tables: "my db.t``1", ro: true}},
	{"select * from 表 where 列 = 1", factsSummary{kind: StmtSelect, tables: "表", ro: true}},
	{"insert into test.t (a) values (1)", factsSummary{kind: StmtInsert, tables: "test.t"}},
	{"insert t values (1)", factsSummary{kind: StmtInsert, tables: "t"}},
	{"insert ignore into t select * from t2", factsSummary{kind: StmtInsert, tables: "t|t2"}},
	{"INSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE a = VALUES(a)", factsSummary{kind: StmtInsert, tables: "t"}},
	{"update t set a=1 where id=2", factsSummary{kind: StmtUpdate, tables: "t"}},
	{"update low_priority ignore db.t as x, t2 set x.a = t2.a", factsSummary{kind: StmtUpdate, tables: "db.t|t2"}},
	{"delete from t where id=1", factsSummary{kind: StmtDelete, tables: "t"}},
	{"delete t1 from t1 join t2 on t1.id = t2.id", factsSummary{kind: StmtDelete, tables: "t1|t2"}},
	{"replace into t values(1)", factsSummary{kind: StmtReplace, tables: "t"}},
	{"select * from t1, t2 as b, db.t3 c where x = 1", factsSummary{kind: StmtSelect, tables: "t1|t2|db.t3", ro: true}},
	{"select * from a, b, c, d, e", factsSummary{kind: StmtSelect, tables: "a|b|c|d", more: true, ro: true}},
	{"select * from t1 join t1", factsSummary{kind: StmtSelect, tables: "t1", ro: true}},
	{"select extract(year from d), trim(leading 'x' from s) from t", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"select * from (select * from t1) x join t2", factsSummary{kind: StmtSelect, tables: "t1|t2", ro: true}},
	{"select * from t1 where a in (select b from t2)", factsSummary{kind: StmtSelect, tables: "t1|t2", ro: true}},
	{"select * from json_table('[]', '$[*]' columns (a int path '$')) j", factsSummary{kind: StmtSelect, ro: true}},
	{"select * from dual", factsSummary{kind: StmtSelect, ro: true}},
	{"select * from t partition (p0), t2", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"select a from t order by a, b", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"select a from t where a is not null group by a, b", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"select * from t limit 1, 2", factsSummary{kind: StmtSelect, tables: "t", ro: true}},
	{"truncate table t", factsSummary{kind: StmtTruncate, tables: "t"}},
	{"truncate db.t", factsSummary{kind: StmtTruncate, tables: "db.t"}},
	{"alter table t add column a int, add column b int", factsSummary{kind: StmtAlter, tables: "t"}},
	{"alter table t drop a, drop b", factsSummary{kind: StmtAlter, tables: "t"}},
	{"load data local infile 'f' replace into table db.t", factsSummary{kind: StmtLoad, second: "DATA", tables: "db.t"}},

	// Statements in one text.
	{"select 1;", factsSummary{kind: StmtSelect, ro: true}},
	{"select 1; ;; -- c\n /* d */ # e", factsSummary{kind: StmtSelect, ro: true}},
	{"select ';'", factsSummary{kind: StmtSelect, ro: true}},
	{"select 1 # ;\n", factsSummary{kind: StmtSelect, ro: true}},
	{"select 1; select 2", factsSummary{kind: StmtSelect, multi: true}},
	{"select 1; /*! select 2 */", factsSummary{kind: StmtSelect, multi: true}},
	{"select 1; select found_rows()", factsSummary{kind: StmtSelect, multi: true, pins: PinLastResult}},
	{"select 1; set transaction read only", factsSummary{kind: StmtSelect, multi: true, pins: PinNextTxn}},
	{"select 1; insert into t values (1)", factsSummary{kind: StmtSelect, tables: "t", multi: true}},

	// KILL.
	{"kill query 17", factsSummary{kind: StmtKill, second: "QUERY", kill: KillInfo{ID: 17, Query: true, OK: true}}},
	{"kill 17;", factsSummary{kind: StmtKill, kill: KillInfo{ID: 17, OK: true}}},
	{"KILL 17 ; ;", factsSummary{kind: StmtKill, kill: KillInfo{ID: 17, OK: true}}},
	{"kill connection 4294967295", factsSummary{kind: StmtKill, second: "CONNECTION", kill: KillInfo{ID: 4294967295, OK: true}}},
	{"kill 007", factsSummary{kind: StmtKill, kill: KillInfo{ID: 7, OK: true}}},
	{"kill /* c */ 17 -- x", factsSummary{kind: StmtKill, kill: KillInfo{ID: 17, OK: true}}},
	{"kill 4294967296", factsSummary{kind: StmtKill}},
	// MariaDB Connector/J 2.x sends an id above 2^31 as a signed int.
	{"KILL QUERY -1769996222", factsSummary{kind: StmtKill, second: "QUERY", kill: KillInfo{ID: 2524971074, Query: true, OK: true}}},
	{"kill -2147483648", factsSummary{kind: StmtKill, kill: KillInfo{ID: 2147483648, OK: true}}},
	{"kill - 1", factsSummary{kind: StmtKill, kill: KillInfo{ID: 4294967295, OK: true}}},
	{"kill -2147483649", factsSummary{kind: StmtKill}},
	{"kill -0", factsSummary{kind: StmtKill}},
	{"kill --1", factsSummary{kind: StmtKill}},
	{"kill proxysession 3", factsSummary{kind: StmtKill, second: "PROXYSESSION"}},
	{"KILL 17; select 1", factsSummary{kind: StmtKill, multi: true}},
	{"kill 17abc", factsSummary{kind: StmtKill}},
	{"kill 17.5", factsSummary{kind: StmtKill}},
	{"kill query", factsSummary{kind: StmtKill, second: "QUERY"}},
	{"kill query id 3", factsSummary{kind: StmtKill, second: "QUERY"}},
	{"kill connection query 3", factsSummary{kind: StmtKill, second: "CONNECTION"}},
	{"(kill 3)", factsSummary{kind: StmtKill}},

	// Texts that end early.
	{"select 'abc", factsSummary{kind: StmtSelect, incomplete: true}},
	{`select "abc`, factsSummary{kind: StmtSelect, incomplete: true}},
	{"select * from t where a = 'x\\", factsSummary{kind: StmtSelect, tables: "t", incomplete: true}},
	{"select * from `t", factsSummary{kind: StmtSelect, tables: "t", incomplete: true}},
	{"select /* abc", factsSummary{kind: StmtSelect, incomplete: true}},
	{"select /*+ read_consistency(weak)", factsSummary{kind: StmtSelect, incomplete: true}},
	{"commit /*", factsSummary{kind: StmtCommit, incomplete: true}},
	{"begin /*! work", factsSummary{kind: StmtBegin, incomplete: true}},
	{"kill 17 /* open", factsSummary{kind: StmtKill, incomplete: true}},
	{"/*! select get_lock('a', 1)", factsSummary{pins: PinUserLock, incomplete: true}},
	{"select found_rows(), 'abc", factsSummary{kind: StmtSelect, pins: PinLastResult, incomplete: true}},
	{"", factsSummary{}},
	{"/* unterminated", factsSummary{incomplete: true}},
	{"--", factsSummary{}},
	{"@", factsSummary{}},
	{"@@", factsSummary{}},
	{"select @", factsSummary{kind: StmtSelect, ro: true}},
}

func TestLex(t *testing.T) {
	for _, c := range factsCases {
		f := Lex([]byte(c.sql))
		if got := summarize(f); got != c.want {
			t.Errorf("Lex(%q)\n got %+v\nwant %+v", c.sql, got, c.want)
		}
		if info := Classify([]byte(c.sql)); info.Kind != f.Kind || info.Second != f.Second {
			t.Errorf("Lex(%q) kind %v/%q, Classify %v/%q", c.sql, f.Kind, f.Second, info.Kind, info.Second)
		}
	}
}

func TestLexPrefix(t *testing.T) {
	cases := []factsCase{
		{"select * from t where id = 1", factsSummary{kind: StmtSelect, tables: "t", incomplete: true}},
		{"select last_insert_id(), 'abc", factsSummary{kind: StmtSelect, pins: PinLastResult, incomplete: true}},
		{"commit", factsSummary{kind: StmtCommit, incomplete: true}},
		{"kill 3", factsSummary{kind: StmtKill, incomplete: true}},
		{"begin", factsSummary{kind: StmtBegin, incomplete: true}},
		{"select /*+ read_consistency(weak) */ 1; select 2", factsSummary{kind: StmtSelect, rc: ConsistencyWeak, multi: true, incomplete: true}},
		{"insert into t values (1), (2), ('a", factsSummary{kind: StmtInsert, tables: "t", incomplete: true}},
	}
	for _, c := range cases {
		if got := summarize(LexPrefix([]byte(c.sql))); got != c.want {
			t.Errorf("LexPrefix(%q)\n got %+v\nwant %+v", c.sql, got, c.want)
		}
	}
}

func TestLexTableRefsBorrowed(t *testing.T) {
	sql := []byte("select * from db.t")
	f := Lex(sql)
	if f.NumTables != 1 || cap(f.Tables[0].Name) != len(f.Tables[0].Name) || cap(f.Tables[0].DB) != len(f.Tables[0].DB) {
		t.Fatalf("tables %+v: want capped sub-slices", f.Tables[:f.NumTables])
	}
	sql[len(sql)-1] = 'u'
	if string(f.Tables[0].Name) != "u" {
		t.Fatalf("Name %q does not alias the input", f.Tables[0].Name)
	}
}

func TestPinString(t *testing.T) {
	cases := map[Pin]string{
		0:                           "NONE",
		PinTempTable:                "TEMP_TABLE",
		PinUserLock | PinLastResult: "USER_LOCK|LAST_RESULT",
		PinSequence | 1<<15:         "SEQUENCE|?",
	}
	for p, want := range cases {
		if got := p.String(); got != want {
			t.Errorf("Pin(%#x).String() = %q, want %q", uint16(p), got, want)
		}
	}
	if !PinXA.Holds() || PinXA.NeedsLast() || !PinUnlock.NeedsLast() || PinUnlock.Holds() {
		t.Fatal("pin families")
	}
	if PinsHold&PinsLast != 0 || PinsHold|PinsLast != 1<<len(pinNames)-1 {
		t.Fatal("every pin is in exactly one family")
	}
}

func TestLexAllocs(t *testing.T) {
	for _, c := range factsCases {
		sql := []byte(c.sql)
		if n := testing.AllocsPerRun(20, func() { _ = Lex(sql) }); n != 0 {
			t.Errorf("Lex(%q) allocates %v times", c.sql, n)
		}
	}
	for _, sql := range [][]byte{[]byte(benchPointSelect), []byte(benchUpdate)} {
		if n := testing.AllocsPerRun(100, func() { _ = Lex(sql) }); n != 0 {
			t.Errorf("Lex(%q) allocates %v times", sql, n)
		}
	}
}

func TestLookupKW(t *testing.T) {
	for k, name := range kwNames {
		if name == "" {
			continue
		}
		for _, w := range []string{name, strings.ToLower(name), strings.ToLower(name[:1]) + name[1:]} {
			if got := lookupKW([]byte(w)); got != kw(k) {
				t.Errorf("lookupKW(%q) = %d, want %d", w, got, k)
			}
		}
		if got := lookupKW([]byte(name + "X")); got != kwNone {
			t.Errorf("lookupKW(%q) = %d", name+"X", got)
		}
	}
	for _, w := range []string{"", "s", "sbtest1", "SELEC", "SELECTS", "_", "RELEASE_ALL_LOCKS_", "\xffSELECT"} {
		if got := lookupKW([]byte(w)); got != kwNone {
			t.Errorf("lookupKW(%q) = %d", w, got)
		}
	}
	for name, kind := range keywordKinds {
		if got, ok := kindsByWord.get([]byte(strings.ToLower(name))); !ok || got != kind {
			t.Errorf("kindsByWord(%q) = %v %v", name, got, ok)
		}
	}
	for name := range secondKeywords {
		if got, ok := secondsByWord.get([]byte(name)); !ok || got != name {
			t.Errorf("secondsByWord(%q) = %q %v", name, got, ok)
		}
	}
}

func TestUseTarget(t *testing.T) {
	for sql, want := range map[string]string{
		"USE db":                   "db",
		"use   `my db`;":           "my db",
		"USE `a``b`":               "a`b",
		"/* c */ USE db /* x */ ;": "db",
		"USE db1\n":                "db1",
		"USE 123":                  "123",
		"USE":                      "",
		"USE db; SELECT 1":         "",
		"USE `db":                  "",
		"SELECT 1":                 "",
		"USED db":                  "",
	} {
		got, ok := UseTarget([]byte(sql))
		if got != want || ok != (want != "") {
			t.Errorf("UseTarget(%q) = %q, %v; want %q", sql, got, ok, want)
		}
	}
}
