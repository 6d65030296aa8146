package memory

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Scrape fetches a Prometheus text exposition (obgate's /metrics).
func Scrape(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(body), nil
}

// MetricValue finds the sample of series in a Prometheus text exposition.
// series is a metric name optionally followed by labels exactly as the
// exposition writes them, e.g. `go_goroutines` or
// `odp_current_session{sessionType="client"}`.
func MetricValue(text, series string) (float64, error) {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		rest, ok := strings.CutPrefix(line, series)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		f := strings.Fields(rest)
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("metric %s: %w", series, err)
		}
		return v, nil
	}
	return 0, fmt.Errorf("metric %s not found", series)
}

// ScrapeValue scrapes url and returns the value of series.
func ScrapeValue(ctx context.Context, url, series string) (float64, error) {
	text, err := Scrape(ctx, url)
	if err != nil {
		return 0, err
	}
	return MetricValue(text, series)
}

// Series obgate exports that the measurements read.
const (
	SeriesGoroutines    = "go_goroutines"
	SeriesClientSession = `odp_current_session{sessionType="client"}`
)

// WaitMetric polls series at url until cond holds for its value or ctx
// ends; it returns the last value read.
func WaitMetric(ctx context.Context, url, series string, cond func(float64) bool) (float64, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		v, err := ScrapeValue(ctx, url, series)
		if err == nil && cond(v) {
			return v, nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return v, fmt.Errorf("%w (last scrape: %v)", context.Cause(ctx), err)
			}
			return v, fmt.Errorf("%s is %g: %w", series, v, context.Cause(ctx))
		case <-tick.C:
		}
	}
}
