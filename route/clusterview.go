package route

import (
	"cmp"
	"slices"
	"sort"
	"strings"
)

// Read-only views of a cluster resource for the admin package's SHOW
// PROXYCLUSTER, SHOW PROXYRESOURCE and SHOW PROXYINFO IDC. Any goroutine
// may call them.

// RSList is the root-server list the cluster was configured with
// (rootservice_list or cluster_rootservice_list), in the given order.
func (c *Cluster) RSList() []string { return slices.Clone(c.rsList) }

// LDCReport is how an IDC name (proxy_idc_name) classifies a cluster's
// zones, in ODP's terms: how the name matched, the regions of the matched
// zones, and the zone names per class.
type LDCReport struct {
	MatchType   string // MATCHED_BY_NONE, MATCHED_BY_IDC or MATCHED_BY_ZONE_PREFIX
	Regions     []string
	SameIDC     []string
	SameRegion  []string
	OtherRegion []string
}

// LDCReport classifies t's zones for idc with the rule routing uses
// (ldc): a zone whose IDC is the name, else a zone whose name starts with
// it; with no match every zone counts as the same IDC, as in ODP.
func (t *Table) LDCReport(idc string) LDCReport {
	r := LDCReport{MatchType: "MATCHED_BY_NONE"}
	v := t.ldc(idc)
	if v.enabled {
		r.MatchType = "MATCHED_BY_ZONE_PREFIX"
		for _, z := range t.Zones {
			if strings.EqualFold(z.IDC, idc) {
				r.MatchType = "MATCHED_BY_IDC"
				break
			}
		}
	}
	regions := map[string]bool{}
	for name, z := range t.Zones {
		class := SameIDC
		if v.enabled {
			class = v.zones[name]
		}
		switch class {
		case SameIDC:
			r.SameIDC = append(r.SameIDC, name)
			if v.enabled && !regions[z.Region] {
				regions[z.Region] = true
				r.Regions = append(r.Regions, z.Region)
			}
		case SameRegion:
			r.SameRegion = append(r.SameRegion, name)
		default:
			r.OtherRegion = append(r.OtherRegion, name)
		}
	}
	for _, s := range [][]string{r.Regions, r.SameIDC, r.SameRegion, r.OtherRegion} {
		sort.Strings(s)
	}
	return r
}

// IDCRegion is one IDC of a cluster and its region.
type IDCRegion struct{ IDC, Region string }

// IDCs lists the distinct IDCs of t's zones (zones without one are left
// out), sorted.
func (t *Table) IDCs() []IDCRegion {
	seen := map[IDCRegion]bool{}
	var out []IDCRegion
	for _, z := range t.Zones {
		k := IDCRegion{z.IDC, z.Region}
		if z.IDC == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		return cmp.Or(cmp.Compare(out[i].IDC, out[j].IDC), cmp.Compare(out[i].Region, out[j].Region)) < 0
	})
	return out
}
