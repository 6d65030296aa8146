package suite

import (
	"fmt"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WriteRoutingPlots draws, for each workload, QPS and p99 latency side by
// side, a bar per target grouped by thread count, as
// dir/routing-<workload>.png.
func WriteRoutingPlots(s *RoutingSummary, dir string) ([]Plot, error) {
	var out []Plot
	for _, w := range s.Settings.Workloads {
		pl := Plot{Workload: w, Kind: "routing", File: "routing-" + w + ".png"}
		qps, err := routingBars(s, w, "QPS", "queries per second", func(c *RoutingCell) Num { return c.QPS })
		if err != nil {
			return out, fmt.Errorf("plot %s: %w", pl.File, err)
		}
		p99, err := routingBars(s, w, "p99 latency", "ms per event", func(c *RoutingCell) Num { return c.P99Ms })
		if err != nil {
			return out, fmt.Errorf("plot %s: %w", pl.File, err)
		}
		qps.Y.Tick.Marker = intTicks{}
		if err := saveSideBySide(filepath.Join(dir, pl.File), qps, p99); err != nil {
			return out, fmt.Errorf("plot %s: %w", pl.File, err)
		}
		out = append(out, pl)
	}
	return out, nil
}

// routingBars is a bar chart of one figure of workload's cells: a group
// per thread count, a bar per target, in the targets' colours.
func routingBars(s *RoutingSummary, workload, title, unit string, value func(*RoutingCell) Num) (*plot.Plot, error) {
	var series []barSeries
	for i, t := range s.Targets {
		b := barSeries{name: t.Name, color: i, values: make(plotter.Values, len(s.Settings.Threads))}
		for j, th := range s.Settings.Threads {
			if c := s.Cell(workload, th, t.Name); c != nil && value(c).Valid() {
				b.values[j] = float64(value(c))
			}
		}
		series = append(series, b)
	}
	p, maxY, err := threadBars(workload+": "+title, unit, s.Settings.Threads, series, 120, -vg.Points(4))
	if err != nil {
		return nil, err
	}
	p.Y.Max = maxY * 1.35 // room for the legend
	if maxY == 0 {
		p.Title.Text += " (no data)"
		p.Y.Max = 1
	}
	return p, nil
}

// saveSideBySide draws the plots in one row of a PNG file.
func saveSideBySide(file string, plots ...*plot.Plot) error {
	c := newCanvas(len(plots))
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Points(16), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[0][i])
	}
	return WritePNG(c, file)
}
