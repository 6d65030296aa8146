package obsim

import "testing"

// FuzzAnalyze feeds arbitrary SQL to the statement lexer and analyzer that
// decide a statement's table, partition keys and user-variable
// assignments: they must never panic.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM test.orders WHERE id = 5",
		"INSERT INTO orders (id, amount) VALUES (1, 2), (3, 4)",
		"UPDATE t SET a = 'x''y' WHERE k IN (1, 2, 3) AND j = -4",
		"SET @a = 1, @@session.time_zone = '+08:00'",
		"SELECT 5 INTO @e",
		"/* c */ select `a``b` from `db`.`t` where x = \"q\\\"\"",
		"'unterminated",
		"SELECT @u := 1 -- comment",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		_ = analyze(sql)
		_ = parseIdentity(sql)
	})
}

// FuzzParseTopology feeds arbitrary bytes to the topology file parser and
// the zones flag parser: an error, never a panic.
func FuzzParseTopology(f *testing.F) {
	f.Add([]byte(`{"cluster":"c","zones":[{"name":"z1"}],"tenants":[{"name":"t"}]}`), "z1:r1:i1:ReadWrite:1")
	f.Add([]byte(`{"zones":[{"name":""}]}`), "a:b")
	f.Fuzz(func(t *testing.T, raw []byte, zones string) {
		_, _ = ParseTopology(raw)
		_, _ = ParseZonesFlag(zones)
	})
}

// FuzzExecParams feeds arbitrary COM_STMT_EXECUTE packets, for statements
// of 0 to 15 parameters, to the parameter decoder and binds the result to
// a statement's placeholders: nothing may panic.
func FuzzExecParams(f *testing.F) {
	f.Add([]byte{0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 0, 5, 0, 0, 0}, uint8(1), false)
	f.Add([]byte{0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0xfc, 0xff}, uint8(2), true)
	lx := lex("SELECT * FROM t WHERE a = ? AND b IN (?, ?) AND ? = c")
	f.Fuzz(func(t *testing.T, pkt []byte, n uint8, long bool) {
		ps := &prepared{nparams: int(n % 16), longData: make([]bool, n%16)}
		if long && n%16 > 0 {
			ps.longData[0] = true
		}
		params := decodeExecParams(pkt, ps)
		_ = decodeExecParams(pkt, ps) // with the kept types
		_ = analyzeBound(lx, params)
	})
}
