package chaos

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"obgate/bench/suite"
)

const (
	plotWidthPx  = 800
	plotHeightPx = 560
	plotDPI      = 96
)

var (
	colRead    = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	colWrite   = color.RGBA{R: 44, G: 160, B: 44, A: 255}
	colNode    = color.RGBA{R: 148, G: 103, B: 189, A: 255}
	colFault   = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	colRecover = color.RGBA{R: 23, G: 190, B: 207, A: 255}
)

// WritePlot draws the run as a PNG: successful statements per second on
// top (with the faulted server's requests when known), failed ones below,
// faults and repairs as vertical lines.
func WritePlot(res *Result, file string) error {
	top := plot.New()
	top.Title.Text = fmt.Sprintf("%s [%s]: %s", res.Scenario, res.Target, res.Title)
	top.Y.Label.Text = "successful statements / s"
	bottom := plot.New()
	bottom.Y.Label.Text = "failed statements / s"
	bottom.X.Label.Text = "seconds since the load started"
	for _, p := range []*plot.Plot{top, bottom} {
		p.Add(plotter.NewGrid())
		p.Y.Min = 0
		p.Y.Tick.Marker = intTicks{}
		p.X.Min = 0
		p.X.Max = max(1, res.DurationS)
		p.Legend.Top = true
		p.Legend.Left = true
		p.Legend.XOffs = vg.Points(6)
	}
	series := func(get func(Second) int64) (plotter.XYs, float64) {
		var xys plotter.XYs
		peak := 0.0
		for _, s := range res.Series {
			if float64(s.T+1) > res.DurationS+0.05 {
				break // the last, partial second would look like a drop
			}
			v := get(s)
			if v < 0 {
				return nil, 0
			}
			xys = append(xys, plotter.XY{X: float64(s.T) + 0.5, Y: float64(v)})
			peak = max(peak, float64(v))
		}
		return xys, peak
	}
	topMax, bottomMax := 1.0, 1.0
	add := func(p *plot.Plot, name string, c color.Color, get func(Second) int64, peak *float64) error {
		xys, m := series(get)
		if len(xys) == 0 {
			return nil
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.Color = c
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(name, l)
		*peak = max(*peak, m)
		return nil
	}
	for _, a := range []struct {
		p    *plot.Plot
		name string
		c    color.Color
		get  func(Second) int64
		peak *float64
	}{
		{top, "reads", colRead, func(s Second) int64 { return s.ReadOK }, &topMax},
		{top, "writes", colWrite, func(s Second) int64 { return s.WriteOK }, &topMax},
		{top, "requests to " + res.Server, colNode, func(s Second) int64 { return s.NodeRequests }, &topMax},
		{bottom, "reads", colRead, func(s Second) int64 { return s.ReadFail }, &bottomMax},
		{bottom, "writes", colWrite, func(s Second) int64 { return s.WriteFail }, &bottomMax},
	} {
		if err := add(a.p, a.name, a.c, a.get, a.peak); err != nil {
			return err
		}
	}
	// Headroom for the legends: the series' on top, the events' below.
	top.Y.Max, bottom.Y.Max = topMax*1.45, bottomMax*1.7
	for _, e := range res.Events {
		c := colFault
		if e.Kind == "recover" {
			c = colRecover
		}
		for i, p := range []*plot.Plot{top, bottom} {
			l, err := plotter.NewLine(plotter.XYs{{X: e.At, Y: 0}, {X: e.At, Y: p.Y.Max}})
			if err != nil {
				return err
			}
			l.Color = c
			l.Width = vg.Points(1)
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(l)
			if i == 1 {
				p.Legend.Add(fmt.Sprintf("%s %+.1fs", e.What, e.At), l)
			}
		}
	}
	img := vgimg.NewWith(
		vgimg.UseWH(vg.Length(plotWidthPx)*vg.Inch/plotDPI, vg.Length(plotHeightPx)*vg.Inch/plotDPI),
		vgimg.UseDPI(plotDPI),
	)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(8), PadY: vg.Points(6)}
	plots := [][]*plot.Plot{{top}, {bottom}}
	canvases := plot.Align(plots, tiles, dc)
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	return suite.WritePNG(img, file)
}

// intTicks labels the default ticks as whole numbers.
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	out := ticks[:0]
	for _, t := range ticks {
		if t.Value != math.Trunc(t.Value) {
			if t.Label != "" {
				continue // a fraction of a statement: no such tick
			}
		} else if t.Label != "" {
			t.Label = strconv.FormatFloat(t.Value, 'f', 0, 64)
		}
		out = append(out, t)
	}
	return out
}
