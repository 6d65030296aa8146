package route

import (
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"obgate/config"
)

// Clusters is the set of clusters obgate serves: the default one from
// rootservice_cluster_name and rootservice_list (-c, -r), plus any named in
// cluster_rootservice_list. Safe for concurrent use.
type Clusters struct {
	cfg *config.Store
	log *slog.Logger

	mu       sync.RWMutex
	m        map[string]*Cluster
	defaultC string
	closed   bool

	panics   panicHook    // see SetPanicHook
	tls      tlsHook      // see SetServerTLS
	observer observerHook // see SetTableObserver
}

// NewClusters creates the cluster resources named by the configuration
// and starts their background refresh. Their first metadata load happens
// on the first login (Cluster.Ready) or the first refresh tick.
func NewClusters(cfg *config.Store, log *slog.Logger) (*Clusters, error) {
	c := cfg.Load()
	cs := &Clusters{cfg: cfg, log: log, m: map[string]*Cluster{}}
	if rs := c.RootserviceAddrs(); len(rs) > 0 {
		cs.defaultC = c.RootserviceClusterName
		cs.add(c.RootserviceClusterName, rs)
	}
	extra, err := ParseClusterList(c.ClusterRootserviceList)
	if err != nil {
		return nil, err
	}
	for name, rs := range extra {
		if _, dup := cs.m[name]; dup {
			return nil, fmt.Errorf("cluster %q is given twice", name)
		}
		if cs.defaultC == "" {
			cs.defaultC = name
		}
		cs.add(name, rs)
	}
	if len(cs.m) == 0 {
		return nil, fmt.Errorf("no cluster configured: give rootservice_list (-r) and rootservice_cluster_name (-c)")
	}
	return cs, nil
}

func (cs *Clusters) add(name string, rs []string) {
	cl := newCluster(name, -1, rs, cs.cfg, cs.log)
	cl.panics = &cs.panics
	cl.tls = &cs.tls
	cl.observer = &cs.observer
	cs.m[name] = cl
	cl.start()
}

// ParseClusterList reads cluster_rootservice_list:
// name=ip:port;ip:port|name2=ip:port (config.ParseClusterList).
func ParseClusterList(s string) (map[string][]string, error) {
	m, err := config.ParseClusterList(s)
	if err != nil {
		return nil, fmt.Errorf("cluster_rootservice_list: %w", err)
	}
	return m, nil
}

// Get returns the named cluster.
func (cs *Clusters) Get(name string) (*Cluster, bool) {
	cs.mu.RLock()
	defer cs.mu.RUnlock()
	c, ok := cs.m[name]
	return c, ok
}

// Default returns the name of the cluster used when a login names none.
func (cs *Clusters) Default() string { return cs.defaultC }

// All returns every cluster, sorted by name.
func (cs *Clusters) All() []*Cluster {
	cs.mu.RLock()
	out := make([]*Cluster, 0, len(cs.m))
	for _, c := range cs.m {
		out = append(out, c)
	}
	cs.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Close stops every refresh loop and closes the internal connections.
func (cs *Clusters) Close() {
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return
	}
	cs.closed = true
	all := make([]*Cluster, 0, len(cs.m))
	for _, c := range cs.m {
		all = append(all, c)
	}
	cs.mu.Unlock()
	for _, c := range all {
		c.close()
	}
}
