package suite

import (
	"errors"
	"os"
	"path/filepath"
)

// writeRunReport writes a run's report section to outDir/report.md, kept
// with the results: render builds it with links relative to outDir.
func (cfg RunConfig) writeRunReport(outDir string, render func(ReportLinks) string) error {
	section := render(ReportLinks{PlotsDir: ".", ResultsDir: ".", Readme: rel(outDir, cfg.abs("bench/README.md"))})
	return os.WriteFile(filepath.Join(outDir, "report.md"), []byte(section), 0o644)
}

// publishSection copies a run's charts from outDir to PlotsDir and
// rewrites one section of the report file (ReportPath): render builds it
// with links relative to the report, update puts it into the old text.
func (cfg RunConfig) publishSection(plots []Plot, outDir string, render func(ReportLinks) string, update func(doc, section string) string) error {
	report, plotsDir, readme := cfg.abs(cfg.ReportPath), cfg.abs(cfg.PlotsDir), cfg.abs("bench/README.md")
	if err := os.MkdirAll(plotsDir, 0o755); err != nil {
		return err
	}
	for _, pl := range plots {
		b, err := os.ReadFile(filepath.Join(outDir, pl.File))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(plotsDir, pl.File), b, 0o644); err != nil {
			return err
		}
	}
	dir := filepath.Dir(report)
	section := render(ReportLinks{PlotsDir: rel(dir, plotsDir), ResultsDir: rel(dir, outDir), Readme: rel(dir, readme)})
	old, err := os.ReadFile(report)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.WriteFile(report, []byte(update(string(old), section)), 0o644)
}
