// Package safefile opens the files that obgate's configuration names (TLS
// certificates and keys, obgate.conf, the diagnosis log) so that a wrong
// or hostile path cannot hang or fool the process: whoever can change a
// parameter (ALTER PROXYCONFIG) or a file beside it must not be able to
// park a reader on a FIFO, make obgate read a device or a multi-gigabyte
// file into memory, or redirect its log writes through a symbolic link.
//
// It imports nothing of obgate's, so any package may use it.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Errors returned by ReadFile and OpenLog wrap one of these (or an
// os.PathError from the system call).
var (
	// ErrNotRegular: the path names a directory, FIFO, socket or device.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file holds more than the reader's limit.
	ErrTooLarge = errors.New("file too large")
	// ErrSymlink: a log path's last component is a symbolic link.
	ErrSymlink = errors.New("is a symbolic link")
)

// MaxPEM is the limit obgate reads PEM files (certificates, keys, CA
// bundles) with: a certificate chain is a few KiB and a large CA bundle
// (the whole Mozilla set) about 250 KiB, so 1 MiB leaves room and still
// keeps a wrong path from filling memory.
const MaxPEM = 1 << 20

// MaxConfig is the limit obgate.conf is read with. Every item written out
// at its longest (4096 bytes a string) is under 1 MiB.
const MaxConfig = 1 << 20

// ReadFile reads the regular file at path, which may hold at most limit
// bytes. It opens the path without blocking (O_NONBLOCK, so a FIFO with no
// writer does not hang the open) and without taking a controlling
// terminal (O_NOCTTY), then checks the descriptor it opened, not the
// path, so that the file cannot be swapped between the check and the
// read: anything but a regular file is refused with ErrNotRegular, a file
// over limit with ErrTooLarge. A symbolic link is followed (Kubernetes
// mounts Secrets and ConfigMaps as links); it is what it points to that
// must be a regular file. Any goroutine.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat() // fstat of the open descriptor
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(st.Mode()))}
	}
	if st.Size() > limit {
		return nil, tooLarge(path, limit)
	}
	// The size may change while it is read: read one byte past the limit
	// to tell a file that grew from one that fits.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, limit)
	}
	return data, nil
}

func tooLarge(path string, limit int64) error {
	return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit)}
}

// LogPerm and LogDirPerm are the modes OpenLog creates files and
// directories with (before the umask): logs name clients, users and
// servers, which is nobody else's business; the obgate group may read
// them (a log shipper, an operator).
const (
	LogPerm    fs.FileMode = 0o640
	LogDirPerm fs.FileMode = 0o750
)

// OpenLog opens the log file at path for appending, creating it with
// LogPerm and its missing directories with LogDirPerm. It refuses a
// symbolic link as the last component (O_NOFOLLOW: ErrSymlink), so that
// whoever can write the log directory cannot point obgate's writes at
// another file, and anything but a regular file (a FIFO would block every
// write; ErrNotRegular). Existing files and directories keep their modes.
// Any goroutine.
func OpenLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), LogDirPerm); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, LogPerm)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && errors.Is(pe.Err, syscall.ELOOP) {
			return nil, &fs.PathError{Op: "open", Path: path, Err: ErrSymlink}
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(st.Mode()))}
	}
	return f, nil
}

// kind names a file type for error messages.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "type " + m.Type().String()
}
