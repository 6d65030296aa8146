package main

import (
	"log/slog"
	"path/filepath"

	"obgate/config"
	"obgate/internal/rotlog"
)

// diagnosisFile is the diagnosis log's name in log_dir, ODP's
// obproxy_diagnosis.log under obgate's name.
const diagnosisFile = "obgate_diagnosis.log"

// openDiagnosis opens the diagnosis log: JSON lines in log_dir, rotated
// at max_log_file_size with log_dir kept under log_dir_size_threshold
// (both read at every write, so ALTER PROXYCONFIG applies at once). With
// log_dir empty the lines go to the main log. close flushes and closes it.
// The file is created 0640 in a directory made 0750, and a symbolic link
// or anything but a regular file in its place is an error (rotlog opens
// it through internal/safefile): whoever may write log_dir must not be
// able to point obgate's writes at another file.
func openDiagnosis(store *config.Store, main *slog.Logger) (log *slog.Logger, path string, close func(), err error) {
	cfg := store.Load()
	if cfg.LogDir == "" {
		return main.With("log", "diagnosis"), "", func() {}, nil
	}
	path = filepath.Join(cfg.LogDir, diagnosisFile)
	f, err := rotlog.Open(path, func() (int64, int64) {
		c := store.Load()
		return c.MaxLogFileSize, c.LogDirSizeThreshold
	})
	if err != nil {
		return nil, "", nil, err
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return slog.New(slog.NewJSONHandler(f, nil)), path, func() { _ = f.Close() }, nil
}
