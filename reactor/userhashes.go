package reactor

import (
	"context"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"obgate/mysqlproto"
)

// hashRefresh is how long hashes read from mysql.user are used before
// they are read again.
const hashRefresh = time.Minute

// userHashes reads users' mysql_native_password hashes from the servers'
// mysql.user with mysql_hash_reader_user (mysql routing mode), for the
// users that mysql_user_hashes does not list. Safe for concurrent use;
// lookups wait for at most one read at a time.
type userHashes struct {
	mu      sync.Mutex
	read    time.Time
	byUser  map[string][][]byte // user → stage2 hashes (one per host entry)
	lastErr error
}

// candidates returns the hashes user may have: from mysql_user_hashes,
// else from mysql.user when a reader account is configured.
func (srv *Server) userHashCandidates(user string) [][]byte {
	cfg := srv.cfg.Load()
	if h, ok := userHash(cfg.MySQLUserHashes, user); ok {
		return [][]byte{h}
	}
	if cfg.MySQLHashReaderUser == "" {
		return nil
	}
	return srv.hashes.lookup(srv, user)
}

func (u *userHashes) lookup(srv *Server, user string) [][]byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	if time.Since(u.read) >= hashRefresh {
		u.refresh(srv)
	}
	return u.byUser[user]
}

// refresh reads mysql.user from the first listed server that answers; on
// failure the previous hashes stay and the next lookup tries again after
// the refresh interval.
func (u *userHashes) refresh(srv *Server) {
	cfg := srv.cfg.Load()
	u.read = time.Now()
	var stage1 []byte
	if cfg.MySQLHashReaderPassword != "" {
		b, err := hex.DecodeString(cfg.MySQLHashReaderPassword)
		if err != nil {
			u.lastErr = err
			return
		}
		stage1 = b
	}
	for _, addr := range serverAddrs(cfg) {
		opts := mysqlproto.ClientOptions{User: cfg.MySQLHashReaderUser, PasswordStage1: stage1}
		tlsCfg, required, err := srv.tls.server.For(cfg, addr)
		if err != nil {
			u.lastErr = err
			continue
		}
		// As every connection to the servers (enable_server_ssl): this
		// one carries a password hash reader's login and the hashes.
		opts.TLS, opts.TLSOptional = tlsCfg, !required
		ctx, cancel := context.WithTimeout(context.Background(), cfg.ShortAsyncTaskTimeout)
		cl, err := mysqlproto.Dial(ctx, addr, opts)
		cancel()
		if err != nil {
			u.lastErr = err
			continue
		}
		_ = cl.Conn().SetDeadline(time.Now().Add(cfg.ShortAsyncTaskTimeout))
		res, err := cl.Query("SELECT User, authentication_string FROM mysql.user WHERE plugin IN ('mysql_native_password', '') AND authentication_string LIKE '*%'")
		_ = cl.Close()
		if err != nil {
			u.lastErr = err
			continue
		}
		m := make(map[string][][]byte, len(res.Rows))
		for i := range res.Rows {
			h, err := hex.DecodeString(strings.TrimPrefix(res.String(i, "authentication_string"), "*"))
			if err == nil && len(h) == 20 {
				name := res.String(i, "User")
				m[name] = append(m[name], h)
			}
		}
		u.byUser, u.lastErr = m, nil
		return
	}
	srv.log.Warn("cannot read user hashes from mysql.user with mysql_hash_reader_user; sessions of users not in mysql_user_hashes cannot move", "err", u.lastErr)
}
