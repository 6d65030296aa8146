// Package rotlog is a log file that rotates itself by size, as ODP's log
// files do: when a write would take the file past its limit, the file is
// renamed NAME.YYYYMMDDhhmmss and a new one is started; then the oldest
// rotated files of that name are removed until the log directory's files
// together, with room for the new file to reach its limit, fit the
// directory limit.
//
// Files are opened through internal/safefile: created 0640 in a directory
// made 0750, and a symbolic link or a non-regular file in the log's place
// is refused rather than written through.
package rotlog

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"obgate/internal/safefile"
)

// Limits returns the current limits in bytes: the size of one file and of
// all log files in the directory together (0 = no limit). It is called on
// every write, so the limits may change while the file is open (ALTER
// PROXYCONFIG); it must be cheap (an atomic load).
type Limits func() (fileMax, dirMax int64)

// File is a size-rotated log file. Its methods may be called from any
// goroutine; writes are serialised.
type File struct {
	path   string
	limits Limits
	now    func() time.Time

	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open opens (appending) or creates the file at path, creating its
// directory if needed (safefile.OpenLog: a symbolic link at path is
// refused).
func Open(path string, limits Limits) (*File, error) {
	l := &File{path: path, limits: limits, now: time.Now}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *File) open() error {
	f, err := safefile.OpenLog(l.path)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	l.f, l.size = f, st.Size()
	return nil
}

// Path returns the file's path.
func (l *File) Path() string { return l.path }

// Write appends p, one whole record, rotating first when p would take the
// file past its limit. A record is never split between files.
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	fileMax, dirMax := l.limits()
	if fileMax > 0 && l.size > 0 && l.size+int64(len(p)) > fileMax {
		if err := l.rotate(fileMax, dirMax); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// rotate renames the current file aside and starts a new one; mu is held.
func (l *File) rotate(fileMax, dirMax int64) error {
	if err := l.f.Close(); err != nil {
		return err
	}
	l.f = nil
	stamp := l.now().Format("20060102150405")
	aside := l.path + "." + stamp
	for i := 1; exists(aside); i++ {
		aside = fmt.Sprintf("%s.%s.%d", l.path, stamp, i)
	}
	if err := os.Rename(l.path, aside); err != nil {
		return err
	}
	if err := l.open(); err != nil {
		return err
	}
	if dirMax > 0 {
		// Room for the new file to grow to its limit, so the directory
		// stays under dirMax between rotations too.
		l.prune(max(dirMax-fileMax, 0))
	}
	return nil
}

// prune removes this file's oldest rotated copies while the directory's
// regular files together are larger than limit. mu is held.
func (l *File) prune(limit int64) {
	dir, base := filepath.Dir(l.path), filepath.Base(l.path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var total int64
	var rotated []string // names sort by their time stamp
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		total += info.Size()
		if strings.HasPrefix(e.Name(), base+".") {
			rotated = append(rotated, e.Name())
		}
	}
	slices.Sort(rotated)
	for _, name := range rotated {
		if total <= limit {
			return
		}
		p := filepath.Join(dir, name)
		info, err := os.Lstat(p)
		if err != nil || !info.Mode().IsRegular() {
			continue // not one of ours: a link or whatever else is left alone
		}
		if os.Remove(p) == nil {
			total -= info.Size()
		}
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// Close closes the file; later writes fail.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
