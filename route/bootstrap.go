package route

import (
	"fmt"
	"strings"
)

// Bootstrapped reports whether every configured cluster has loaded its
// server list at least once: nil when they all have, otherwise an error
// wrapping ErrClusterNotReady that names the clusters still waiting. A
// loaded snapshot is never dropped, so once nil it stays nil; a cluster
// that becomes unreachable later keeps its last list (its servers'
// health is the health package's business, not readiness). The readiness
// probe of the metrics port calls it; any goroutine may.
func (cs *Clusters) Bootstrapped() error {
	var waiting []string
	for _, c := range cs.All() {
		if c.Table() == nil {
			waiting = append(waiting, c.name)
		}
	}
	if len(waiting) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrClusterNotReady, strings.Join(waiting, ", "))
}
