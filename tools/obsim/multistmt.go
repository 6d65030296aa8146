package obsim

import "strings"

// laterStatements analyzes the statements after the first one of a
// multi-statement query: the texts between top-level semicolons, each
// lexed again so that its own hints count. It returns nil for a single
// statement (with or without a trailing semicolon). The first statement
// is the caller's analysis of the whole text, which stops at the first
// semicolon.
//
// The split is lexical: inside a compound statement (BEGIN NOT ATOMIC …
// END, a CREATE PROCEDURE body) the parts after the first semicolon count
// as statements of their own.
//
// Called by the session's goroutine for COM_QUERY when the session has
// multi-statements on.
func laterStatements(sql string, toks []token) []*stmtInfo {
	if strings.IndexByte(sql, ';') < 0 {
		return nil
	}
	var out []*stmtInfo
	depth, start := 0, -1 // start: byte offset after the last top-level ';'
	for i := range toks {
		t := &toks[i]
		switch {
		case t.is("("):
			depth++
		case t.is(")"):
			depth = max(depth-1, 0)
		case depth == 0 && t.is(";"):
			if start >= 0 {
				out = appendStatement(out, sql[start:t.start])
			}
			start = t.end
		}
	}
	if start >= 0 {
		out = appendStatement(out, sql[start:])
	}
	return out
}

// appendStatement adds the analysis of text unless it is empty.
func appendStatement(out []*stmtInfo, text string) []*stmtInfo {
	lx := lex(text)
	if len(lx.toks) == 0 {
		return out
	}
	return append(out, analyzeLexed(lx))
}
