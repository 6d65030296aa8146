package route

// TableEntries returns the cluster's table location entries (SHOW
// PROXYROUTE), sorted by tenant, database and table.
func (c *Cluster) TableEntries() []*TableEntry { return c.locations.entries() }

// MarkTenantDirty marks every table entry of a tenant dirty and due at
// once (ERR 5150 TENANT_NOT_IN_SERVER, 4666 CLUSTER_NO_MATCH). Any
// goroutine.
func (c *Cluster) MarkTenantDirty(tenant string) { c.locations.markTenantDirty(tenant) }

// LocationStats are counters of the cluster's location cache.
type LocationStats struct {
	Entries                       int
	Bytes                         int64
	Fetches, FetchErrors, Evicted uint64
}

// LocationStats returns the location cache's counters.
func (c *Cluster) LocationStats() LocationStats {
	lc := c.locations
	return LocationStats{
		Entries: len(*lc.slots.Load()), Bytes: lc.bytes.Load(),
		Fetches: lc.fetches.Load(), FetchErrors: lc.fetchErrors.Load(), Evicted: lc.evictions.Load(),
	}
}
