package suite

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
)

// obgateArgv is how the suites start obgate: on 127.0.0.1:port with
// metrics on mport, configuration in confDir, servers (the -r/-c/-o
// arguments that say where the servers are and the routing mode), then
// one -o per opts entry.
func obgateArgv(bin string, port, mport int, confDir string, servers, opts []string) []string {
	argv := []string{bin, "-N", "-p", strconv.Itoa(port), "-l", strconv.Itoa(mport), "--config-dir", confDir}
	argv = append(argv, servers...)
	for _, o := range opts {
		argv = append(argv, "-o", o)
	}
	return argv
}

// startObgate starts bin as the obgate process of t, on a free port with
// its metrics on another: the standard arguments with its configuration in
// confDir, servers, cfg.ObgateOpts, then extra; its log is
// outDir/logs/<name>.log. The first obgate started records the commit and
// version of cfg.ObgateBin in env.
func startObgate(ctx context.Context, cfg RunConfig, t *target, bin, confDir string, servers, extra []string, outDir string, env *Environment) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	mport, err := freePort()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		return err
	}
	argv := append(obgateArgv(bin, port, mport, confDir, servers, cfg.ObgateOpts), extra...)
	p, err := StartProcess(t.Name, filepath.Join(outDir, "logs", t.Name+".log"), argv...)
	if err != nil {
		return err
	}
	t.Port, t.proc, t.Command = port, p, relArgs(cfg.Root, argv)
	if env.ObgateCommit == "" {
		env.ObgateCommit = GitCommit(ctx, cfg.Root)
		env.ObgateVersion = firstLine(commandOutput(ctx, cfg.ObgateBin, "-V"))
	}
	return nil
}
