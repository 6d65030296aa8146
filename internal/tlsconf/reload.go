package tlsconf

// PEM files that TLS reads, reloaded when they change on disk: the client
// certificate (enable_client_ssl) and the CA, certificate and key used
// towards servers (enable_server_ssl). The files are read again at each
// use, a TLS handshake or a server dial, which costs a few system calls
// beside the handshake's own cryptography; they are parsed again only when
// their bytes differ from the last good ones. A file that becomes
// unreadable or invalid leaves the last good value in use, with a warning
// in the log, so that a certificate being rewritten by a renewal tool
// never takes TLS down. Files are read with internal/safefile: a FIFO,
// device or directory named as a PEM file is refused instead of blocking
// the login or dial that reads it, and so is a file over 1 MiB
// (safefile.MaxPEM).

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"obgate/internal/safefile"
)

// Reloading holds a value built from the contents of some files and
// builds it again when their names or contents change. Its methods are
// safe for concurrent use.
type Reloading[T any] struct {
	What  string // names the value in log lines and errors
	Build func(contents [][]byte) (T, error)

	mu       sync.Mutex
	paths    []string
	contents [][]byte
	val      T
	ok       bool   // val was built from paths and contents
	lastErr  string // the failure last logged, to log each one once
}

// Get returns the value built from the files at paths, read now (an empty
// path stands for no file: its content is nil). When they
// cannot be read or built, it logs why once and returns the last good
// value, from whichever paths; with none it returns the error. Each
// distinct failure is logged once.
func (r *Reloading[T]) Get(log *slog.Logger, paths ...string) (T, error) {
	contents := make([][]byte, len(paths))
	var err error
	for i, p := range paths {
		if p == "" {
			continue
		}
		if contents[i], err = safefile.ReadFile(p, safefile.MaxPEM); err != nil {
			break
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil && r.ok && slices.Equal(paths, r.paths) && slices.EqualFunc(contents, r.contents, bytes.Equal) {
		return r.val, nil
	}
	var v T
	if err == nil {
		v, err = r.Build(contents)
	}
	if err == nil {
		r.paths, r.contents, r.val, r.ok, r.lastErr = slices.Clone(paths), contents, v, true, ""
		return v, nil
	}
	err = fmt.Errorf("%s: %w", r.What, err)
	if msg := err.Error(); msg != r.lastErr {
		r.lastErr = msg
		if r.ok {
			log.Warn("TLS files could not be loaded; the last good ones stay in use", "what", r.What, "paths", paths, "err", err)
		} else {
			log.Warn("TLS files could not be loaded", "what", r.What, "paths", paths, "err", err)
		}
	}
	if r.ok {
		return r.val, nil
	}
	return v, err
}
