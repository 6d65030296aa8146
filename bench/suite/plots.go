package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot size in pixels.
const (
	plotWidthPx  = 640
	plotHeightPx = 400
	plotDPI      = 96
)

// WritePlots draws, for each workload, QPS against threads (one line per
// target) and the proxies' CPU µs per query (bars grouped by threads) as PNG
// files in dir.
func WritePlots(s *Summary, dir string) ([]Plot, error) {
	var out []Plot
	for _, w := range s.Settings.Workloads {
		q := Plot{Workload: w, Kind: "qps", File: "qps-" + w + ".png"}
		if err := qpsPlot(s, w, filepath.Join(dir, q.File)); err != nil {
			return out, fmt.Errorf("plot %s: %w", q.File, err)
		}
		out = append(out, q)

		var proxies []TargetInfo
		for _, t := range s.Targets {
			if t.IsProxy() {
				proxies = append(proxies, t)
			}
		}
		if len(proxies) == 0 {
			continue
		}
		c := Plot{Workload: w, Kind: "cpu", File: "cpu-" + w + ".png"}
		if err := cpuPlot(s, w, proxies, filepath.Join(dir, c.File)); err != nil {
			return out, fmt.Errorf("plot %s: %w", c.File, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func qpsPlot(s *Summary, workload, file string) error {
	p := plot.New()
	p.Title.Text = workload + ": QPS by threads"
	p.X.Label.Text = "sysbench threads"
	p.Y.Label.Text = "queries per second"
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	for _, th := range s.Settings.Threads {
		ticks = append(ticks, plot.Tick{Value: float64(th), Label: strconv.Itoa(th)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Min = 0
	p.Y.Tick.Marker = intTicks{}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	p.Add(plotter.NewGrid())
	maxY := 0.0

	lines := 0
	for i, t := range s.Targets {
		var xys plotter.XYs
		for _, th := range s.Settings.Threads {
			if c := s.Cell(workload, th, t.Name); c != nil && c.QPS.Valid() {
				xys = append(xys, plotter.XY{X: float64(th), Y: float64(c.QPS)})
				maxY = max(maxY, float64(c.QPS))
			}
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		pts.Color = plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(t.Name, l, pts)
		lines++
	}
	if len(ticks) > 0 {
		// Keep the end points off the frame on the log axis.
		p.X.Min = float64(s.Settings.Threads[0]) / 1.3
		p.X.Max = float64(s.Settings.Threads[len(s.Settings.Threads)-1]) * 1.3
	}
	p.Y.Max = maxY * 1.2 // room for the legend
	if lines == 0 {
		p.Title.Text += " (no data)"
		p.Y.Max = 1
	}
	return savePNG(p, file)
}

func cpuPlot(s *Summary, workload string, proxies []TargetInfo, file string) error {
	var series []barSeries
	for _, t := range proxies {
		b := barSeries{name: t.Name, color: colorIndex(s, t.Name), values: make(plotter.Values, len(s.Settings.Threads))}
		for j, th := range s.Settings.Threads {
			if c := s.Cell(workload, th, t.Name); c != nil && c.ProxyCPUUsPerQuery.Valid() {
				b.values[j] = float64(c.ProxyCPUUsPerQuery)
			}
		}
		series = append(series, b)
	}
	p, maxY, err := threadBars(workload+": proxy CPU per query", "CPU µs per query", s.Settings.Threads, series, 60, -vg.Points(8))
	if err != nil {
		return err
	}
	p.Y.Max = maxY * 1.25 // room for the legend
	if maxY == 0 {
		p.Y.Max = 1
	}
	return savePNG(p, file)
}

// colorIndex keeps a target's colour the same in both kinds of chart.
func colorIndex(s *Summary, name string) int {
	for i, t := range s.Targets {
		if t.Name == name {
			return i
		}
	}
	return 0
}

func savePNG(p *plot.Plot, file string) error {
	c := newCanvas(1)
	p.Draw(draw.New(c))
	return WritePNG(c, file)
}

// newCanvas is a canvas for n charts side by side.
func newCanvas(n int) *vgimg.Canvas {
	return vgimg.NewWith(
		vgimg.UseWH(vg.Length(plotWidthPx*n)*vg.Inch/plotDPI, vg.Length(plotHeightPx)*vg.Inch/plotDPI),
		vgimg.UseDPI(plotDPI),
	)
}

// WritePNG writes a drawn canvas to file as PNG (the chaos suite's plots
// use it too).
func WritePNG(c *vgimg.Canvas, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// intTicks labels the default ticks as whole numbers ("50000", not
// "50000.00").
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', 0, 64)
		}
	}
	return ticks
}
