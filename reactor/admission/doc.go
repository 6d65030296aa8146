// Package admission keeps the counts that decide whether a connection may
// begin a login: logins in progress, in all and per source address
// (HandshakeSlots, for client_max_handshakes), and failed administrator
// logins per source (AdminFailures). Sources are counted by address, an
// IPv6 one by its /64 (SourceKey). reactor asks it from the accept loop
// and the login goroutines; nothing here runs on the statement path.
package admission
