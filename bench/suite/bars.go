package suite

import (
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// barSeries is one target's bars in a chart over thread counts.
type barSeries struct {
	name   string
	color  int            // plotutil's colour index
	values plotter.Values // one per thread count, 0 where there is none
}

// threadBars is a bar chart with a group of bars per thread count, in
// each group a bar per series, side by side and groupWidth points wide
// together. Its legend is at the top right, legendXOffs from the corner;
// the caller sets the top of the Y axis from maxY, the largest value.
func threadBars(title, unit string, threads []int, series []barSeries, groupWidth float64, legendXOffs vg.Length) (p *plot.Plot, maxY float64, err error) {
	p = plot.New()
	p.Title.Text = title
	p.X.Label.Text = "sysbench threads"
	p.Y.Label.Text = unit
	p.Legend.Top = true
	p.Legend.XOffs = legendXOffs
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)
	var names []string
	for _, th := range threads {
		names = append(names, strconv.Itoa(th))
	}
	p.NominalX(names...)

	n := max(len(series), 1)
	width := vg.Points(groupWidth / float64(n))
	for i, s := range series {
		for _, v := range s.values {
			maxY = max(maxY, v)
		}
		bars, err := plotter.NewBarChart(s.values, width)
		if err != nil {
			return nil, 0, err
		}
		bars.Color = plotutil.Color(s.color)
		bars.LineStyle.Width = 0
		bars.Offset = width * vg.Length(float64(i)-float64(n-1)/2)
		p.Add(bars)
		p.Legend.Add(s.name, bars)
	}
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	p.Y.Min = 0
	return p, maxY, nil
}
