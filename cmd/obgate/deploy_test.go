package main

// Static checks of the files under deploy/: no container runtime, systemd
// or Kubernetes is needed (or used). They tie each file to what obgate
// really parses and serves: flags go through config.ParseArgs, the
// ConfigMap's obgate.conf through config.Check and the startup checks of
// --check-config, probe paths through the metrics port's handler table.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"obgate/config"
	"obgate/metrics"
)

const deployDir = "../../deploy"

// servesPath reports whether the metrics port routes path to a handler of
// its own (not a 404 or a subtree's catch-all).
func servesPath(path string) bool {
	_, pattern := metricsMux(metrics.New(), probes{}).Handler(httptest.NewRequest("GET", path, nil))
	return pattern == path
}

// parseObgateArgs checks that argv runs obgate and returns its options.
func parseObgateArgs(t *testing.T, what string, argv []string) *config.Options {
	t.Helper()
	if len(argv) == 0 || filepath.Base(argv[0]) != "obgate" {
		t.Fatalf("%s: %q does not run obgate", what, argv)
	}
	opts, err := config.ParseArgs(argv[1:])
	if err != nil {
		t.Fatalf("%s: obgate would refuse %q: %v", what, argv[1:], err)
	}
	return opts
}

// unitFile is a systemd unit: section → key → values in order.
type unitFile map[string]map[string][]string

func readUnit(t *testing.T, path string) unitFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unitFile{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not key=value inside a section: %q", path, n, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return u
}

// one returns the single value of key in section.
func (u unitFile) one(t *testing.T, section, key string) string {
	t.Helper()
	vs := u[section][key]
	if len(vs) != 1 {
		t.Fatalf("[%s] %s is given %d times, want once", section, key, len(vs))
	}
	return vs[0]
}

// execArgv splits an Exec*= line, dropping systemd's prefix characters.
func execArgv(line string) []string {
	return strings.Fields(strings.TrimLeft(line, "-@:+!"))
}

// systemdSeconds parses a systemd time span of the forms the unit uses:
// a bare number of seconds or a Go-style duration such as 60s or 2min.
func systemdSeconds(t *testing.T, s string) time.Duration {
	t.Helper()
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second
	}
	d, err := time.ParseDuration(strings.ReplaceAll(s, "min", "m"))
	if err != nil {
		t.Fatalf("time span %q: %v", s, err)
	}
	return d
}

// TestDeploySystemdUnit checks deploy/systemd/obgate.service: both command
// lines are options obgate accepts, ExecStartPre checks the same config
// directory that ExecStart serves from and the service may write, the stop
// timeout outlasts the default drain, and restarts and the descriptor
// limit are set.
func TestDeploySystemdUnit(t *testing.T) {
	u := readUnit(t, filepath.Join(deployDir, "systemd", "obgate.service"))
	pre := parseObgateArgs(t, "ExecStartPre", execArgv(u.one(t, "Service", "ExecStartPre")))
	start := parseObgateArgs(t, "ExecStart", execArgv(u.one(t, "Service", "ExecStart")))
	if !pre.CheckConfig {
		t.Error("ExecStartPre does not run obgate --check-config")
	}
	if start.CheckConfig {
		t.Error("ExecStart runs --check-config instead of serving")
	}
	if pre.Path() != start.Path() || !slices.Equal(pre.Overrides, start.Overrides) {
		t.Errorf("ExecStartPre checks %s %v, ExecStart uses %s %v", pre.Path(), pre.Overrides, start.Path(), start.Overrides)
	}
	if rw := strings.Fields(u.one(t, "Service", "ReadWritePaths")); !slices.Contains(rw, start.ConfigDir) {
		t.Errorf("ReadWritePaths %q lacks the config directory %s, which obgate rewrites", rw, start.ConfigDir)
	}
	drain := config.Default().HotUpgradeExitTimeout
	if stop := systemdSeconds(t, u.one(t, "Service", "TimeoutStopSec")); stop <= drain {
		t.Errorf("TimeoutStopSec %v does not outlast hot_upgrade_exit_timeout's default %v", stop, drain)
	}
	if sig := u["Service"]["KillSignal"]; len(sig) > 0 && sig[0] != "SIGTERM" {
		t.Errorf("KillSignal=%s; obgate drains on SIGTERM", sig[0])
	}
	if r := u.one(t, "Service", "Restart"); r != "on-failure" {
		t.Errorf("Restart=%s, want on-failure", r)
	}
	if n := u.one(t, "Service", "LimitNOFILE"); n != "infinity" {
		if v, err := strconv.Atoi(n); err != nil || v < 65536 {
			t.Errorf("LimitNOFILE=%s, want at least 65536", n)
		}
	}
	if user := u.one(t, "Service", "User"); user == "" || user == "root" || user == "0" {
		t.Errorf("User=%q; obgate needs no root", user)
	}
}

// containerfile is the instructions of a Containerfile, continuation lines
// joined: instruction → arguments, in order.
type containerfile [][2]string

func readContainerfile(t *testing.T, path string) containerfile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out containerfile
	var cur strings.Builder
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || trimmed[0] == '#') {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		instr, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, [2]string{strings.ToUpper(instr), strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

func (c containerfile) all(instr string) []string {
	var out []string
	for _, in := range c {
		if in[0] == instr {
			out = append(out, in[1])
		}
	}
	return out
}

// jsonArgs parses an exec-form ENTRYPOINT or CMD.
func jsonArgs(t *testing.T, instr, s string) []string {
	t.Helper()
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("%s %s: want the exec form, a JSON array (so that SIGTERM reaches obgate): %v", instr, s, err)
	}
	return out
}

// TestDeployContainerfile checks deploy/container/Containerfile: a build
// stage and a runtime stage, the binary built from ./cmd/obgate, a
// non-root user, the ports obgate listens on by default exposed, and an
// exec-form entry point whose default options obgate accepts.
func TestDeployContainerfile(t *testing.T) {
	cf := readContainerfile(t, filepath.Join(deployDir, "container", "Containerfile"))
	froms := cf.all("FROM")
	if len(froms) < 2 || !strings.Contains(strings.ToLower(froms[0]), "golang") {
		t.Errorf("FROM %q: want a golang build stage, then a runtime stage", froms)
	}
	if !slices.ContainsFunc(cf.all("RUN"), func(s string) bool { return strings.Contains(s, "go build") && strings.Contains(s, "./cmd/obgate") }) {
		t.Error("no RUN builds ./cmd/obgate")
	}
	users := cf.all("USER")
	if len(users) == 0 {
		t.Fatal("no USER: the image would run as root")
	}
	user, _, _ := strings.Cut(users[len(users)-1], ":")
	if uid, err := strconv.Atoi(user); err != nil || uid == 0 {
		t.Errorf("USER %s: want a numeric non-root uid (Kubernetes' runAsNonRoot checks it)", users[len(users)-1])
	}
	var exposed []int64
	for _, e := range cf.all("EXPOSE") {
		for _, p := range strings.Fields(e) {
			n, err := strconv.ParseInt(strings.TrimSuffix(p, "/tcp"), 10, 64)
			if err != nil {
				t.Fatalf("EXPOSE %s: %v", e, err)
			}
			exposed = append(exposed, n)
		}
	}
	def := config.Default()
	for _, p := range []int64{def.ListenPort, def.PrometheusListenPort} {
		if !slices.Contains(exposed, p) {
			t.Errorf("EXPOSE %v lacks %d, a default port of obgate", exposed, p)
		}
	}
	if s := cf.all("STOPSIGNAL"); len(s) > 0 && s[0] != "SIGTERM" {
		t.Errorf("STOPSIGNAL %s; obgate drains on SIGTERM", s[0])
	}
	eps, cmds := cf.all("ENTRYPOINT"), cf.all("CMD")
	if len(eps) != 1 || len(cmds) != 1 {
		t.Fatalf("ENTRYPOINT %q, CMD %q: want one of each", eps, cmds)
	}
	argv := append(jsonArgs(t, "ENTRYPOINT", eps[0]), jsonArgs(t, "CMD", cmds[0])...)
	opts := parseObgateArgs(t, "ENTRYPOINT+CMD", argv)
	if opts.CheckConfig || opts.ConfigDir == config.DefaultConfigDir {
		t.Errorf("ENTRYPOINT+CMD %q: want obgate serving from an absolute config directory", argv)
	}
}

// The parts of Kubernetes objects the checks read (yaml.v3 needs the tags:
// it would look for lowercased field names).
type (
	k8sObject struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name   string            `yaml:"name"`
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Data      map[string]string `yaml:"data"`
		Resources []string          `yaml:"resources"`
		Spec      yaml.Node         `yaml:"spec"`
	}
	deploymentSpec struct {
		Replicas int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	}
	podSpec struct {
		TerminationGracePeriodSeconds *int `yaml:"terminationGracePeriodSeconds"`
		SecurityContext               struct {
			RunAsNonRoot bool `yaml:"runAsNonRoot"`
			RunAsUser    int  `yaml:"runAsUser"`
		} `yaml:"securityContext"`
		InitContainers []k8sContainer `yaml:"initContainers"`
		Containers     []k8sContainer `yaml:"containers"`
		Volumes        []struct {
			Name      string    `yaml:"name"`
			EmptyDir  *struct{} `yaml:"emptyDir"`
			ConfigMap *struct {
				Name string `yaml:"name"`
			} `yaml:"configMap"`
		} `yaml:"volumes"`
	}
	k8sContainer struct {
		Name    string   `yaml:"name"`
		Image   string   `yaml:"image"`
		Command []string `yaml:"command"`
		Args    []string `yaml:"args"`
		Ports   []struct {
			Name          string `yaml:"name"`
			ContainerPort int64  `yaml:"containerPort"`
		} `yaml:"ports"`
		LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
		ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
		Lifecycle      struct {
			PreStop *struct {
				Sleep *struct {
					Seconds int `yaml:"seconds"`
				} `yaml:"sleep"`
			} `yaml:"preStop"`
		} `yaml:"lifecycle"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	}
	k8sProbe struct {
		HTTPGet *struct {
			Path string    `yaml:"path"`
			Port yaml.Node `yaml:"port"` // a number or a port name
		} `yaml:"httpGet"`
	}
	serviceSpec struct {
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Name       string    `yaml:"name"`
			Port       int64     `yaml:"port"`
			TargetPort yaml.Node `yaml:"targetPort"`
		} `yaml:"ports"`
	}
	pdbSpec struct {
		MinAvailable   any `yaml:"minAvailable"` // a number or a percentage
		MaxUnavailable any `yaml:"maxUnavailable"`
		Selector       struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
	}
)

// readManifests decodes every document of every YAML file in dir, by kind.
func readManifests(t *testing.T, dir string) (map[string][]k8sObject, []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", dir, err)
	}
	byKind := map[string][]k8sObject{}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var o k8sObject
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o.Kind == "" || o.APIVersion == "" {
				t.Fatalf("%s: a document without kind or apiVersion", f)
			}
			byKind[o.Kind] = append(byKind[o.Kind], o)
		}
	}
	return byKind, names
}

func onlyOne(t *testing.T, byKind map[string][]k8sObject, kind string) k8sObject {
	t.Helper()
	if len(byKind[kind]) != 1 {
		t.Fatalf("%d objects of kind %s, want 1", len(byKind[kind]), kind)
	}
	return byKind[kind][0]
}

func decodeSpec(t *testing.T, o k8sObject, into any) {
	t.Helper()
	if err := o.Spec.Decode(into); err != nil {
		t.Fatalf("%s %s: spec: %v", o.Kind, o.Metadata.Name, err)
	}
}

// selects reports whether a label selector matches labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// mountOf returns the volume c mounts at path, or "".
func mountOf(c k8sContainer, path string) string {
	for _, m := range c.VolumeMounts {
		if filepath.Clean(m.MountPath) == filepath.Clean(path) {
			return m.Name
		}
	}
	return ""
}

// TestDeployKubernetes checks deploy/kubernetes: the ConfigMap's
// obgate.conf passes --check-config's checks with the Deployment's
// options; the pod copies it into a writable config directory and checks
// it before obgate starts; the container ports are the configured ones;
// the probes ask the paths obgate serves on its metrics port; the grace
// period outlasts preStop plus the drain; the Service and the
// PodDisruptionBudget select the pods; kustomization.yaml lists every file.
func TestDeployKubernetes(t *testing.T) {
	dir := filepath.Join(deployDir, "kubernetes")
	byKind, files := readManifests(t, dir)

	kust := onlyOne(t, byKind, "Kustomization")
	for _, f := range files {
		if f != "kustomization.yaml" && !slices.Contains(kust.Resources, f) {
			t.Errorf("kustomization.yaml does not list %s", f)
		}
	}
	for _, r := range kust.Resources {
		if !slices.Contains(files, r) {
			t.Errorf("kustomization.yaml lists %s, which does not exist", r)
		}
	}

	var dep deploymentSpec
	depObj := onlyOne(t, byKind, "Deployment")
	decodeSpec(t, depObj, &dep)
	pod := dep.Template.Spec
	podLabels := dep.Template.Metadata.Labels
	if !selects(dep.Selector.MatchLabels, podLabels) {
		t.Errorf("the Deployment's selector %v does not match its pods %v", dep.Selector.MatchLabels, podLabels)
	}
	idx := slices.IndexFunc(pod.Containers, func(c k8sContainer) bool { return c.Name == "obgate" })
	if idx < 0 {
		t.Fatal("no container named obgate")
	}
	ctr := pod.Containers[idx]
	opts := parseObgateArgs(t, "container obgate", append([]string{"obgate"}, ctr.Args...))
	if opts.CheckConfig {
		t.Fatal("container obgate runs --check-config instead of serving")
	}
	cfgVolume := mountOf(ctr, opts.ConfigDir)
	if cfgVolume == "" {
		t.Fatalf("container obgate mounts nothing at its config directory %s", opts.ConfigDir)
	}
	volumes := map[string]string{} // name → "emptyDir" or "configMap:<name>"
	for _, v := range pod.Volumes {
		switch {
		case v.EmptyDir != nil:
			volumes[v.Name] = "emptyDir"
		case v.ConfigMap != nil:
			volumes[v.Name] = "configMap:" + v.ConfigMap.Name
		}
	}
	if volumes[cfgVolume] != "emptyDir" {
		t.Errorf("the config directory is volume %s (%q); obgate rewrites its file there, so it must be writable (emptyDir)", cfgVolume, volumes[cfgVolume])
	}

	// The ConfigMap, checked as obgate --check-config would with the
	// container's options.
	cm := onlyOne(t, byKind, "ConfigMap")
	conf, ok := cm.Data[config.FileName]
	if !ok || len(cm.Data) != 1 {
		t.Fatalf("ConfigMap %s holds %d keys; want only %s", cm.Metadata.Name, len(cm.Data), config.FileName)
	}
	tmp := t.TempDir()
	if err := os.WriteFile(filepath.Join(tmp, config.FileName), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	checkOpts := *opts
	checkOpts.ConfigDir = tmp
	cfg, problems := config.Check(&checkOpts)
	problems = append(problems, startupProblems(cfg)...)
	for _, p := range problems {
		t.Errorf("ConfigMap %s: %v", cm.Metadata.Name, p)
	}

	// Init containers: one copies the ConfigMap's file into the config
	// directory, a later one checks it there.
	copied, checked := -1, -1
	for i, ic := range pod.InitContainers {
		if len(ic.Command) == 3 && ic.Command[0] == "cp" && filepath.Clean(ic.Command[2]) == opts.Path() &&
			mountOf(ic, opts.ConfigDir) == cfgVolume &&
			volumes[mountOf(ic, filepath.Dir(ic.Command[1]))] == "configMap:"+cm.Metadata.Name {
			copied = i
		}
		if ic.Command == nil && len(ic.Args) > 0 {
			o := parseObgateArgs(t, "init container "+ic.Name, append([]string{"obgate"}, ic.Args...))
			if o.CheckConfig && o.Path() == opts.Path() && mountOf(ic, o.ConfigDir) == cfgVolume {
				checked = i
			}
		}
		if ic.Image != ctr.Image {
			t.Errorf("init container %s runs %s, obgate runs %s", ic.Name, ic.Image, ctr.Image)
		}
	}
	if copied < 0 {
		t.Errorf("no init container copies ConfigMap %s's %s to %s", cm.Metadata.Name, config.FileName, opts.Path())
	}
	if checked < 0 || checked < copied {
		t.Errorf("no init container runs obgate --check-config on %s after the copy", opts.Path())
	}

	ports := map[string]int64{}
	for _, p := range ctr.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["sql"] != cfg.ListenPort || ports["metrics"] != cfg.PrometheusListenPort {
		t.Errorf("container ports sql %d, metrics %d; the config listens on %d and %d",
			ports["sql"], ports["metrics"], cfg.ListenPort, cfg.PrometheusListenPort)
	}
	if !cfg.EnablePrometheus {
		t.Error("enable_prometheus is off: the probes would have no port")
	}
	portOf := func(n yaml.Node) int64 {
		if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			return v
		}
		return ports[n.Value]
	}
	for _, pr := range []struct {
		what string
		p    *k8sProbe
		path string
	}{{"livenessProbe", ctr.LivenessProbe, healthzPath}, {"readinessProbe", ctr.ReadinessProbe, readyzPath}} {
		if pr.p == nil || pr.p.HTTPGet == nil {
			t.Errorf("%s: want an httpGet probe", pr.what)
			continue
		}
		if pr.p.HTTPGet.Path != pr.path || !servesPath(pr.p.HTTPGet.Path) {
			t.Errorf("%s asks %s; obgate serves %s for it (served: %v)", pr.what, pr.p.HTTPGet.Path, pr.path, servesPath(pr.p.HTTPGet.Path))
		}
		if port := portOf(pr.p.HTTPGet.Port); port != cfg.PrometheusListenPort {
			t.Errorf("%s asks port %q (%d); the probes are on prometheus_listen_port %d", pr.what, pr.p.HTTPGet.Port.Value, port, cfg.PrometheusListenPort)
		}
	}

	preStop := 0
	if ps := ctr.Lifecycle.PreStop; ps != nil && ps.Sleep != nil {
		preStop = ps.Sleep.Seconds
	}
	need := time.Duration(preStop)*time.Second + cfg.HotUpgradeExitTimeout
	grace := 30 // Kubernetes' default
	if g := pod.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	if time.Duration(grace)*time.Second <= need {
		t.Errorf("terminationGracePeriodSeconds %d does not outlast preStop's %d s plus hot_upgrade_exit_timeout %v", grace, preStop, cfg.HotUpgradeExitTimeout)
	}
	if !pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.RunAsUser == 0 {
		t.Error("the pod may run as root; set runAsNonRoot and runAsUser")
	}

	var svc serviceSpec
	svcObj := onlyOne(t, byKind, "Service")
	decodeSpec(t, svcObj, &svc)
	if !selects(svc.Selector, podLabels) {
		t.Errorf("Service %s selects %v, not the pods %v", svcObj.Metadata.Name, svc.Selector, podLabels)
	}
	targets := map[int64]bool{}
	for _, p := range svc.Ports {
		target := p.Port
		if p.TargetPort.Value != "" {
			target = portOf(p.TargetPort)
		}
		targets[target] = true
	}
	if !targets[cfg.ListenPort] || !targets[cfg.PrometheusListenPort] {
		t.Errorf("Service %s reaches container ports %v; want the SQL port %d and the metrics port %d",
			svcObj.Metadata.Name, targets, cfg.ListenPort, cfg.PrometheusListenPort)
	}

	var pdb pdbSpec
	pdbObj := onlyOne(t, byKind, "PodDisruptionBudget")
	decodeSpec(t, pdbObj, &pdb)
	if !selects(pdb.Selector.MatchLabels, podLabels) {
		t.Errorf("PodDisruptionBudget %s selects %v, not the pods %v", pdbObj.Metadata.Name, pdb.Selector.MatchLabels, podLabels)
	}
	if (pdb.MinAvailable == nil) == (pdb.MaxUnavailable == nil) {
		t.Errorf("PodDisruptionBudget %s: give one of minAvailable and maxUnavailable", pdbObj.Metadata.Name)
	}
	if pdb.MinAvailable != nil {
		if n, ok := pdb.MinAvailable.(int); ok && n >= dep.Replicas {
			t.Errorf("PodDisruptionBudget minAvailable %d with %d replicas blocks every drain", n, dep.Replicas)
		}
	}
}

// TestDeployContainerUser checks that the pod runs as the image's user, so
// that the image's config directory and the pod's volumes agree.
func TestDeployContainerUser(t *testing.T) {
	cf := readContainerfile(t, filepath.Join(deployDir, "container", "Containerfile"))
	users := cf.all("USER")
	if len(users) == 0 {
		t.Fatal("no USER in the Containerfile")
	}
	uid, _, _ := strings.Cut(users[len(users)-1], ":")
	byKind, _ := readManifests(t, filepath.Join(deployDir, "kubernetes"))
	var dep deploymentSpec
	decodeSpec(t, onlyOne(t, byKind, "Deployment"), &dep)
	if got := strconv.Itoa(dep.Template.Spec.SecurityContext.RunAsUser); got != uid {
		t.Errorf("the pod runs as uid %s, the image's USER is %s", got, uid)
	}
}
