package main

// Static checks of the files under deploy/: no container runtime, systemd
// or Kubernetes is needed (or used). They tie each file to what obgate
// really parses and serves: flags go through config.ParseArgs, the
// ConfigMap's obgate.conf through config.Check and the startup checks of
// --check-config, probe paths through the metrics port's handler table.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"maps"
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
	_, pattern := metricsMux(metrics.New(), probes{}, func() bool { return true }).Handler(httptest.NewRequest("GET", path, nil))
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
		Data       map[string]string `yaml:"data"`       // ConfigMap; Secret (base64)
		StringData map[string]string `yaml:"stringData"` // Secret
		Resources  []string          `yaml:"resources"`
		Spec       yaml.Node         `yaml:"spec"`
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
		TerminationGracePeriodSeconds *int  `yaml:"terminationGracePeriodSeconds"`
		AutomountServiceAccountToken  *bool `yaml:"automountServiceAccountToken"`
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
			Secret *struct {
				SecretName string `yaml:"secretName"`
			} `yaml:"secret"`
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
			ReadOnly  bool   `yaml:"readOnly"`
		} `yaml:"volumeMounts"`
		Env []struct {
			Name      string `yaml:"name"`
			Value     string `yaml:"value"`
			ValueFrom any    `yaml:"valueFrom"`
		} `yaml:"env"`
		SecurityContext struct {
			AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
			ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
			Privileged               *bool `yaml:"privileged"`
			Capabilities             struct {
				Add  []string `yaml:"add"`
				Drop []string `yaml:"drop"`
			} `yaml:"capabilities"`
		} `yaml:"securityContext"`
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

// TestDeployKubernetes checks deploy/kubernetes: the pod writes obgate.conf
// from the ConfigMap (and the Secret) into a writable config directory and
// checks it before obgate starts, and that file passes --check-config's
// checks with the Deployment's options; the container ports are the
// configured ones; the probes ask the paths obgate serves on its metrics
// port; the grace period outlasts preStop plus the drain; the Service
// publishes the SQL port and not the metrics port (pprof); the Service and
// the PodDisruptionBudget select the pods; kustomization.yaml lists every
// file.
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
	volumes := podVolumes(pod)
	if volumes[cfgVolume] != "emptyDir" {
		t.Errorf("the config directory is volume %s (%q); obgate rewrites its file there, so it must be writable (emptyDir)", cfgVolume, volumes[cfgVolume])
	}

	// Init containers: one writes obgate.conf into the config directory
	// from the ConfigMap (and the Secret), a later one checks it there.
	objects := configObjects(t, byKind)
	built, checked := -1, -1
	var conf string
	var sources []string
	for i, ic := range pod.InitContainers {
		if text, from, ok := builtConfig(ic, opts.Path(), volumes, objects); ok && mountOf(ic, opts.ConfigDir) == cfgVolume {
			built, conf, sources = i, text, from
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
	if built < 0 {
		t.Fatalf("no init container writes %s from a ConfigMap", opts.Path())
	}
	if !slices.ContainsFunc(sources, func(s string) bool { return strings.HasPrefix(s, "configMap:") }) {
		t.Errorf("%s is written from %v, no ConfigMap", opts.Path(), sources)
	}
	if checked < 0 || checked < built {
		t.Errorf("no init container runs obgate --check-config on %s after it is written", opts.Path())
	}

	// The file the pod starts with, checked as obgate --check-config would
	// with the container's options.
	tmp := t.TempDir()
	if err := os.WriteFile(filepath.Join(tmp, config.FileName), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	checkOpts := *opts
	checkOpts.ConfigDir = tmp
	cfg, problems := config.Check(&checkOpts)
	problems = append(problems, cfg.Problems()...)
	for _, p := range problems {
		t.Errorf("%s as the pod writes it from %v: %v", config.FileName, sources, p)
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
	if !targets[cfg.ListenPort] {
		t.Errorf("Service %s reaches container ports %v; want the SQL port %d", svcObj.Metadata.Name, targets, cfg.ListenPort)
	}
	// The metrics port also serves pprof once enable_pprof is on (an ALTER
	// PROXYCONFIG away): Prometheus and the kubelet reach it on the pod.
	if targets[cfg.PrometheusListenPort] {
		t.Errorf("Service %s publishes the metrics port %d, where pprof is served when enable_pprof is on; scrape the pods instead",
			svcObj.Metadata.Name, cfg.PrometheusListenPort)
	}
	if cfg.EnablePprof {
		t.Error("the pod's obgate.conf turns enable_pprof on")
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

// podVolumes maps each volume of pod to "emptyDir", "configMap:<name>" or
// "secret:<name>".
func podVolumes(pod podSpec) map[string]string {
	volumes := map[string]string{}
	for _, v := range pod.Volumes {
		switch {
		case v.EmptyDir != nil:
			volumes[v.Name] = "emptyDir"
		case v.ConfigMap != nil:
			volumes[v.Name] = "configMap:" + v.ConfigMap.Name
		case v.Secret != nil:
			volumes[v.Name] = "secret:" + v.Secret.SecretName
		}
	}
	return volumes
}

// configObjects returns the files of every ConfigMap and Secret, keyed as
// podVolumes names their volumes ("configMap:<name>", "secret:<name>"):
// file name → content (a Secret's data decoded from base64).
func configObjects(t *testing.T, byKind map[string][]k8sObject) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	for _, o := range byKind["ConfigMap"] {
		out["configMap:"+o.Metadata.Name] = o.Data
	}
	for _, o := range byKind["Secret"] {
		files := maps.Clone(o.StringData)
		if files == nil {
			files = map[string]string{}
		}
		for k, v := range o.Data {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				t.Fatalf("Secret %s: data %s is not base64: %v", o.Metadata.Name, k, err)
			}
			files[k] = string(b)
		}
		out["secret:"+o.Metadata.Name] = files
	}
	return out
}

// builtConfig reads what init container ic writes to path: a cp of one
// file, or a shell command that writes path ("> path") from the files it
// names. Each ConfigMap or Secret file that ic mounts and its command
// names counts, in the order named; it returns them joined (a line apart)
// and the objects they came from.
func builtConfig(ic k8sContainer, path string, volumes map[string]string, objects map[string]map[string]string) (string, []string, bool) {
	cmd := strings.Join(ic.Command, " ")
	switch {
	case len(ic.Command) == 3 && ic.Command[0] == "cp" && filepath.Clean(ic.Command[2]) == path:
	case len(ic.Command) == 3 && ic.Command[0] == "sh" && ic.Command[1] == "-c" && strings.Contains(cmd, "> "+path):
	default:
		return "", nil, false
	}
	type part struct {
		at      int
		from, s string
	}
	var parts []part
	for _, m := range ic.VolumeMounts {
		obj := volumes[m.Name]
		for name, content := range objects[obj] {
			if at := strings.Index(cmd, filepath.Join(m.MountPath, name)); at >= 0 {
				parts = append(parts, part{at, obj, content})
			}
		}
	}
	slices.SortFunc(parts, func(a, b part) int { return a.at - b.at })
	var text []string
	var from []string
	for _, p := range parts {
		text = append(text, p.s)
		from = append(from, p.from)
	}
	return strings.Join(text, "\n"), from, len(parts) > 0
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

// secretItems returns the names of the config items whose values must be
// kept secret (passwords and hashes).
func secretItems() []string {
	var out []string
	for _, it := range config.Items() {
		if it.Secret() {
			out = append(out, it.Name())
		}
	}
	return out
}

// mentionsSecret returns the first secret item s names, or "".
func mentionsSecret(s string) string {
	s = strings.ToLower(s)
	for _, name := range secretItems() {
		if strings.Contains(s, name) {
			return name
		}
	}
	return ""
}

// TestDeployKeepsSecretsOut checks that no deploy file puts a password
// where others may read it: no ConfigMap names a password item (a
// ConfigMap is readable by whoever may read the namespace's
// configuration; passwords go in the Secret), and no command line (the
// systemd unit's, the image's, any container's) nor a container's literal
// environment names one (a command line is visible to every user of the
// host). The Secret is mounted read-only by the init container that
// writes obgate.conf and by no other container.
func TestDeployKeepsSecretsOut(t *testing.T) {
	if len(secretItems()) < 5 {
		t.Fatalf("only %v are secret items; the check would miss passwords", secretItems())
	}
	u := readUnit(t, filepath.Join(deployDir, "systemd", "obgate.service"))
	for key, lines := range u["Service"] {
		if !strings.HasPrefix(key, "Exec") {
			continue
		}
		for _, l := range lines {
			if name := mentionsSecret(l); name != "" {
				t.Errorf("obgate.service %s= names %s: a command line is readable by every user of the host", key, name)
			}
		}
	}
	cf := readContainerfile(t, filepath.Join(deployDir, "container", "Containerfile"))
	for _, instr := range []string{"ENTRYPOINT", "CMD", "ENV", "ARG"} {
		for _, v := range cf.all(instr) {
			if name := mentionsSecret(v); name != "" {
				t.Errorf("Containerfile %s names %s", instr, name)
			}
		}
	}

	byKind, _ := readManifests(t, filepath.Join(deployDir, "kubernetes"))
	for _, cm := range byKind["ConfigMap"] {
		for key, text := range cm.Data {
			for _, line := range strings.Split(text, "\n") {
				name, _, ok := strings.Cut(strings.TrimSpace(line), "=")
				if !ok || strings.HasPrefix(strings.TrimSpace(line), "#") {
					continue
				}
				if it, ok := config.Lookup(name); ok && it.Secret() {
					t.Errorf("ConfigMap %s, %s: %s belongs in a Secret", cm.Metadata.Name, key, it.Name())
				}
			}
		}
	}
	var dep deploymentSpec
	decodeSpec(t, onlyOne(t, byKind, "Deployment"), &dep)
	pod := dep.Template.Spec
	volumes := podVolumes(pod)
	all := append(slices.Clone(pod.InitContainers), pod.Containers...)
	for _, c := range all {
		if name := mentionsSecret(strings.Join(append(slices.Clone(c.Command), c.Args...), " ")); name != "" {
			t.Errorf("container %s's command line names %s", c.Name, name)
		}
		for _, e := range c.Env {
			if name := mentionsSecret(e.Name + " " + e.Value); name != "" && e.ValueFrom == nil {
				t.Errorf("container %s's environment %s holds %s in the manifest", c.Name, e.Name, name)
			}
		}
	}

	// The Secret holds the passwords, and only the init container that
	// writes obgate.conf mounts it, read-only.
	secret := onlyOne(t, byKind, "Secret")
	objects := configObjects(t, byKind)
	held := false
	for _, text := range objects["secret:"+secret.Metadata.Name] {
		held = held || mentionsSecret(text) != ""
	}
	if !held {
		t.Errorf("Secret %s holds no password item", secret.Metadata.Name)
	}
	opts := parseObgateArgs(t, "container obgate", append([]string{"obgate"}, pod.Containers[0].Args...))
	for _, c := range all {
		for _, m := range c.VolumeMounts {
			if volumes[m.Name] != "secret:"+secret.Metadata.Name {
				continue
			}
			if _, _, writes := builtConfig(c, opts.Path(), volumes, objects); !writes {
				t.Errorf("container %s mounts Secret %s but does not write %s from it", c.Name, secret.Metadata.Name, opts.Path())
			}
			if !m.ReadOnly {
				t.Errorf("container %s mounts Secret %s writable", c.Name, secret.Metadata.Name)
			}
		}
	}
}

// TestDeployHardening checks that every container of the pod runs
// without privileges: no privilege escalation, a read-only root
// filesystem, every capability dropped and none added; the pod runs as a
// non-root user and without a service account token (obgate never calls
// the Kubernetes API).
func TestDeployHardening(t *testing.T) {
	byKind, _ := readManifests(t, filepath.Join(deployDir, "kubernetes"))
	var dep deploymentSpec
	decodeSpec(t, onlyOne(t, byKind, "Deployment"), &dep)
	pod := dep.Template.Spec
	if !pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.RunAsUser == 0 {
		t.Error("the pod may run as root; set runAsNonRoot and a runAsUser")
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the pod gets a service account token it never uses; set automountServiceAccountToken: false")
	}
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		sc := c.SecurityContext
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("container %s: allowPrivilegeEscalation is not false", c.Name)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("container %s: readOnlyRootFilesystem is not true", c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("container %s is privileged", c.Name)
		}
		if !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
			t.Errorf("container %s: capabilities drop %v, add %v; want drop [ALL] and nothing added", c.Name, sc.Capabilities.Drop, sc.Capabilities.Add)
		}
	}
}
