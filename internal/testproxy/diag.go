package testproxy

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
)

// diagBuffer keeps a test proxy's diagnosis log in memory, as JSON lines
// (the format cmd/obgate writes to obgate_diagnosis.log).
type diagBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (d *diagBuffer) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.buf.Write(p)
}

func (d *diagBuffer) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(d, nil)) }

// DiagLine is one line of the diagnosis log, decoded.
type DiagLine map[string]any

// Str returns a field as text ("" when absent).
func (l DiagLine) Str(k string) string {
	switch v := l[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	return ""
}

// DiagLines returns the diagnosis lines written so far.
func (p *Proxy) DiagLines() []DiagLine {
	p.diag.mu.Lock()
	defer p.diag.mu.Unlock()
	var out []DiagLine
	for _, raw := range bytes.Split(p.diag.buf.Bytes(), []byte("\n")) {
		if len(raw) == 0 {
			continue
		}
		var l DiagLine
		if json.Unmarshal(raw, &l) == nil {
			out = append(out, l)
		}
	}
	return out
}

// DiagText returns the diagnosis log as written, for failure messages.
func (p *Proxy) DiagText() string {
	p.diag.mu.Lock()
	defer p.diag.mu.Unlock()
	return p.diag.buf.String()
}
