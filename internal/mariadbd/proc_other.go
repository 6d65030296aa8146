//go:build !linux

package mariadbd

import (
	"context"
	"syscall"
)

// sysProcAttr: only Linux is supported for real; elsewhere the server simply
// shares the caller's process group.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// lockFile does nothing outside Linux: the rename into place still keeps the
// template cache consistent, concurrent builders just do redundant work.
func lockFile(ctx context.Context, path string) (func(), error) { return func() {}, nil }

func sweepStale() {}
