// Package prepared keeps a client session's prepared statements under
// obgate's own statement ids (Table, Stmt): their text and what routing
// learned of it, the parameter types an execute sent, the server session
// that holds a statement's long data or cursor, and the caps a session's
// statements are held to (Admit). It also keeps the statements a client
// closed that stay prepared on the servers, to answer the next prepare of
// the same text without a round trip (kept.go).
//
// Each server session maps obgate's ids to its own (backend.Conn.Stmts);
// which server session runs a statement, and preparing it there, are the
// reactor's. A Table is used by one goroutine at a time: the owner of its
// session's command.
package prepared
