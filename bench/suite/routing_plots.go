package suite

import (
	"fmt"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// WriteRoutingPlots draws, for each workload, QPS and p99 latency side by
// side, a bar per target grouped by thread count, as
// dir/routing-<workload>.png.
func WriteRoutingPlots(s *RoutingSummary, dir string) ([]Plot, error) {
	var out []Plot
	for _, w := range s.Settings.Workloads {
		pl := Plot{Workload: w, Kind: "routing", File: "routing-" + w + ".png"}
		qps := routingBars(s, w, "QPS", "queries per second", func(c *RoutingCell) Num { return c.QPS })
		p99 := routingBars(s, w, "p99 latency", "ms per event", func(c *RoutingCell) Num { return c.P99Ms })
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
func routingBars(s *RoutingSummary, workload, title, unit string, value func(*RoutingCell) Num) *plot.Plot {
	p := plot.New()
	p.Title.Text = workload + ": " + title
	p.X.Label.Text = "sysbench threads"
	p.Y.Label.Text = unit
	p.Legend.Top = true
	p.Legend.XOffs = -vg.Points(4)
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)
	var names []string
	for _, th := range s.Settings.Threads {
		names = append(names, strconv.Itoa(th))
	}
	p.NominalX(names...)

	n := max(len(s.Targets), 1)
	width := vg.Points(120 / float64(n))
	maxY := 0.0
	for i, t := range s.Targets {
		vals := make(plotter.Values, len(s.Settings.Threads))
		for j, th := range s.Settings.Threads {
			if c := s.Cell(workload, th, t.Name); c != nil && value(c).Valid() {
				vals[j] = float64(value(c))
				maxY = max(maxY, vals[j])
			}
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			continue // only negative or NaN values fail, and none get here
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = width * vg.Length(float64(i)-float64(n-1)/2)
		p.Add(bars)
		p.Legend.Add(t.Name, bars)
	}
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	p.Y.Min = 0
	p.Y.Max = maxY * 1.35 // room for the legend
	if maxY == 0 {
		p.Title.Text += " (no data)"
		p.Y.Max = 1
	}
	return p
}

// saveSideBySide draws the plots in one row of a PNG file.
func saveSideBySide(file string, plots ...*plot.Plot) error {
	c := vgimg.NewWith(
		vgimg.UseWH(vg.Length(plotWidthPx*len(plots))*vg.Inch/plotDPI, vg.Length(plotHeightPx)*vg.Inch/plotDPI),
		vgimg.UseDPI(plotDPI),
	)
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Points(16), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[0][i])
	}
	return WritePNG(c, file)
}
