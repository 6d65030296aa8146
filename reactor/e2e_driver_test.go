package reactor_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"obgate/internal/testkit"

	"github.com/go-sql-driver/mysql"
)

// typeRow is one row of the types table, as Go values.
type typeRow struct {
	id       int64
	ti       sql.NullInt64
	tiu      sql.NullInt64
	si       sql.NullInt64
	siu      sql.NullInt64
	mi       sql.NullInt64
	miu      sql.NullInt64
	i        sql.NullInt64
	iu       sql.NullInt64
	bi       sql.NullInt64
	biu      any // uint64 does not fit sql.NullInt64
	dec      sql.NullString
	f        sql.NullFloat64
	d        sql.NullFloat64
	date     sql.NullTime
	dtm      sql.NullTime
	ts       sql.NullTime
	tm       sql.NullString
	txt      sql.NullString
	bl       []byte
	js       sql.NullString
	nullable sql.NullInt64
}

const typesColumns = "id, ti, tiu, si, siu, mi, miu, i, iu, bi, biu, dec_, f, d, date_, dtm, ts, tm, txt, bl, js, nullable"

func (r *typeRow) args() []any {
	return []any{r.id, r.ti, r.tiu, r.si, r.siu, r.mi, r.miu, r.i, r.iu, r.bi, r.biu,
		r.dec, r.f, r.d, r.date, r.dtm, r.ts, r.tm, r.txt, r.bl, r.js, r.nullable}
}

func (r *typeRow) dest() []any {
	return []any{&r.id, &r.ti, &r.tiu, &r.si, &r.siu, &r.mi, &r.miu, &r.i, &r.iu, &r.bi, &r.biu,
		&r.dec, &r.f, &r.d, &r.date, &r.dtm, &r.ts, &r.tm, &r.txt, &r.bl, &r.js, &r.nullable}
}

// diff compares two rows exactly and describes the first difference; biu
// is compared as its decimal text because the two protocols return it as
// different Go types.
func (r *typeRow) diff(o *typeRow) string {
	a, b := r.args(), o.args()
	for k := range a {
		x, y := a[k], b[k]
		if k == 10 { // biu
			x, y = fmt.Sprint(asText(x)), fmt.Sprint(asText(y))
		}
		if xb, ok := x.([]byte); ok {
			yb, _ := y.([]byte)
			if !bytes.Equal(xb, yb) || (xb == nil) != (yb == nil) {
				return fmt.Sprintf("column %d: %x != %x", k, xb, yb)
			}
			continue
		}
		if xt, ok := x.(sql.NullTime); ok {
			yt := y.(sql.NullTime)
			if xt.Valid != yt.Valid || !xt.Time.Equal(yt.Time) {
				return fmt.Sprintf("column %d: %v != %v", k, xt, yt)
			}
			continue
		}
		if fmt.Sprintf("%#v", x) != fmt.Sprintf("%#v", y) {
			return fmt.Sprintf("column %d: %#v != %#v", k, x, y)
		}
	}
	return ""
}

func asText(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case uint64:
		return fmt.Sprint(x)
	case int64:
		return fmt.Sprint(x)
	case nil:
		return "NULL"
	}
	return v
}

func typeRows() []typeRow {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	some := func(n int64) sql.NullInt64 { return sql.NullInt64{Int64: n, Valid: true} }
	str := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	tm := func(s string) sql.NullTime {
		t, err := time.Parse("2006-01-02 15:04:05.999999", s)
		if err != nil {
			panic(err)
		}
		return sql.NullTime{Time: t, Valid: true}
	}
	return []typeRow{
		{
			id: 1, ti: some(-128), tiu: some(0), si: some(-32768), siu: some(0),
			mi: some(-8388608), miu: some(0), i: some(math.MinInt32), iu: some(0),
			bi: some(math.MinInt64), biu: uint64(0),
			dec: str("-12345678901234567890.0123456789"), f: sql.NullFloat64{Float64: -1.5, Valid: true},
			d:    sql.NullFloat64{Float64: -1.2345678901234567e-300, Valid: true},
			date: tm("1000-01-01 00:00:00"), dtm: tm("1000-01-01 00:00:00.000001"),
			ts: tm("1970-01-02 00:00:00.5"), tm: str("-838:59:58.999999"),
			txt: str("héllo wörld 😀 世界 \x00 end"), bl: all, js: str(`{"a": [1, 2.5, "x😀"], "b": null, "c": {"d": true}}`),
			nullable: some(7),
		},
		{
			id: 2, ti: some(127), tiu: some(255), si: some(32767), siu: some(65535),
			mi: some(8388607), miu: some(16777215), i: some(math.MaxInt32), iu: some(math.MaxUint32),
			bi: some(math.MaxInt64), biu: uint64(math.MaxUint64),
			dec: str("99999999999999999999.9999999999"), f: sql.NullFloat64{Float64: 3.25, Valid: true},
			d:    sql.NullFloat64{Float64: math.Pi, Valid: true},
			date: tm("9999-12-31 00:00:00"), dtm: tm("2024-02-29 13:14:15.123456"),
			ts: tm("2038-01-19 03:14:07.999999"), tm: str("12:34:56.789012"),
			txt: str(""), bl: []byte{0x00, 0xff, 0x00}, js: str(`[]`),
			nullable: some(0),
		},
		{id: 3, bl: nil}, // every other column NULL
	}
}

// TestE2EDriverTypes round-trips every common column type through obgate
// with server-side prepared statements (binary protocol) and reads them
// back with both protocols.
func TestE2EDriverTypes(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		db := rootDB(t, p, func(c *mysql.Config) {
			c.Loc = time.UTC
			c.Params = map[string]string{"time_zone": "'+00:00'"}
		})
		tbl := "types_" + mode
		mustExec(t, db, "DROP TABLE IF EXISTS "+tbl)
		mustExec(t, db, "CREATE TABLE "+tbl+` (
			id INT PRIMARY KEY,
			ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
			mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED,
			bi BIGINT, biu BIGINT UNSIGNED, dec_ DECIMAL(30,10), f FLOAT, d DOUBLE,
			date_ DATE, dtm DATETIME(6), ts TIMESTAMP(6) NULL, tm TIME(6),
			txt TEXT CHARACTER SET utf8mb4, bl LONGBLOB, js JSON, nullable INT NULL)`)

		rows := typeRows()
		if rows[0].diff(&rows[1]) == "" || rows[0].diff(&rows[0]) != "" {
			t.Fatal("typeRow.diff cannot tell rows apart")
		}
		ins, err := db.Prepare("INSERT INTO " + tbl + " (" + typesColumns + ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
		if err != nil {
			t.Fatal(err)
		}
		defer ins.Close()
		for i := range rows {
			if _, err := ins.Exec(rows[i].args()...); err != nil {
				t.Fatalf("insert row %d: %v", rows[i].id, err)
			}
		}

		sel, err := db.Prepare("SELECT " + typesColumns + " FROM " + tbl + " WHERE id = ?")
		if err != nil {
			t.Fatal(err)
		}
		defer sel.Close()
		for i := range rows {
			var got typeRow
			if err := sel.QueryRow(rows[i].id).Scan(got.dest()...); err != nil {
				t.Fatalf("prepared select row %d: %v", rows[i].id, err)
			}
			if d := rows[i].diff(&got); d != "" {
				t.Errorf("row %d via binary protocol: %s", rows[i].id, d)
			}
			var text typeRow
			q := fmt.Sprintf("SELECT %s FROM %s WHERE id = %d", typesColumns, tbl, rows[i].id)
			if err := db.QueryRow(q).Scan(text.dest()...); err != nil {
				t.Fatalf("text select row %d: %v", rows[i].id, err)
			}
			if d := rows[i].diff(&text); d != "" {
				t.Errorf("row %d via text protocol: %s", rows[i].id, d)
			}
		}
		// The server holds what was sent, byte for byte.
		direct := directDB(t)
		var hexBlob, txt string
		if err := direct.QueryRow("SELECT HEX(bl), txt FROM "+testDB+"."+tbl+" WHERE id = 1").Scan(&hexBlob, &txt); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%X", rows[0].bl); hexBlob != want {
			t.Errorf("blob on the server is %s, want %s", hexBlob, want)
		}
		if txt != rows[0].txt.String {
			t.Errorf("text on the server is %q, want %q", txt, rows[0].txt.String)
		}
	})
}

// TestE2EDriverTransactions checks that a transaction's writes are
// invisible to another connection until COMMIT, and never visible after
// ROLLBACK.
func TestE2EDriverTransactions(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		db := rootDB(t, p)
		ctx := context.Background()
		tbl := "txn_" + mode
		mustExec(t, db, "DROP TABLE IF EXISTS "+tbl)
		mustExec(t, db, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY) ENGINE=InnoDB")
		other, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		count := func() int64 { return queryIntConn(t, other, "SELECT COUNT(*) FROM "+tbl) }

		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, tx, "INSERT INTO "+tbl+" VALUES (1), (2)")
		if n := queryInt(t, tx, "SELECT COUNT(*) FROM "+tbl); n != 2 {
			t.Errorf("inside the transaction: %d rows, want 2", n)
		}
		if n := count(); n != 0 {
			t.Errorf("another connection sees %d uncommitted rows, want 0", n)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if n := count(); n != 2 {
			t.Errorf("after COMMIT another connection sees %d rows, want 2", n)
		}

		tx, err = db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, tx, "INSERT INTO "+tbl+" VALUES (3)")
		mustExec(t, tx, "DELETE FROM "+tbl+" WHERE id = 1")
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		if n := count(); n != 2 {
			t.Errorf("after ROLLBACK another connection sees %d rows, want 2", n)
		}
		if n := queryInt(t, directDB(t), "SELECT SUM(id) FROM "+tbl); n != 3 {
			t.Errorf("rows on the server sum to %d, want 3 (ids 1 and 2)", n)
		}
	})
}

func queryIntConn(t *testing.T, c *sql.Conn, query string) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRowContext(context.Background(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestE2EDriverMultiResults runs a procedure that returns several result
// sets (text and binary protocol) and multi-statement queries.
func TestE2EDriverMultiResults(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode string) {
		testkit.CheckLeaks(t)
		p := startProxy(t, mode)
		db := rootDB(t, p, func(c *mysql.Config) { c.MultiStatements = true })
		proc := "multi_" + mode
		mustExec(t, db, "DROP PROCEDURE IF EXISTS "+proc)
		mustExec(t, db, "CREATE PROCEDURE "+proc+`(IN n INT)
			BEGIN
				SELECT 1 AS a;
				SELECT 'x' AS b, n AS c;
				SELECT seq FROM seq_1_to_1000 WHERE seq <= n;
			END`)
		want := [][]string{{"1"}, {"x", "5"}, {"1", "2", "3", "4", "5"}}

		t.Run("CALL text", func(t *testing.T) {
			rows, err := db.Query("CALL " + proc + "(5)")
			if err != nil {
				t.Fatal(err)
			}
			if got := readResultSets(t, rows); !equalSets(got, want) {
				t.Errorf("result sets %q, want %q", got, want)
			}
		})
		t.Run("CALL prepared", func(t *testing.T) {
			rows, err := db.Query("CALL "+proc+"(?)", 5)
			if err != nil {
				t.Fatal(err)
			}
			if got := readResultSets(t, rows); !equalSets(got, want) {
				t.Errorf("result sets %q, want %q", got, want)
			}
		})
		t.Run("multi-statements", func(t *testing.T) {
			tbl := "ms_" + mode
			mustExec(t, db, "DROP TABLE IF EXISTS "+tbl+"; CREATE TABLE "+tbl+" (id INT PRIMARY KEY, v INT);"+
				" INSERT INTO "+tbl+" VALUES (1, 10), (2, 20); UPDATE "+tbl+" SET v = v + 1")
			rows, err := db.Query("SELECT v FROM " + tbl + " ORDER BY id; SELECT COUNT(*) FROM " + tbl + "; SELECT 'end'")
			if err != nil {
				t.Fatal(err)
			}
			want := [][]string{{"11", "21"}, {"2"}, {"end"}}
			if got := readResultSets(t, rows); !equalSets(got, want) {
				t.Errorf("result sets %q, want %q", got, want)
			}
			// An error in the middle stops the batch and reaches the client.
			_, err = db.Exec("INSERT INTO " + tbl + " VALUES (3, 30); INSERT INTO " + tbl + " VALUES (3, 31); INSERT INTO " + tbl + " VALUES (4, 40)")
			if code := sqlErrorCode(err); code != 1062 {
				t.Errorf("duplicate key in a batch: err %v, want ERR 1062", err)
			}
			if n := queryInt(t, db, "SELECT COUNT(*) FROM "+tbl); n != 3 {
				t.Errorf("after the failed batch: %d rows, want 3", n)
			}
		})
	})
}

// readResultSets reads every result set of rows as text, one row value per
// entry for single-column sets and "a,b" otherwise.
func readResultSets(t *testing.T, rows *sql.Rows) [][]string {
	t.Helper()
	defer rows.Close()
	var out [][]string
	for {
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		var set []string
		for rows.Next() {
			vals := make([]sql.RawBytes, len(cols))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				set = append(set, string(v))
			}
		}
		out = append(out, set)
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func equalSets(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}
