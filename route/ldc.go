package route

import (
	"strings"
	"sync/atomic"

	"obgate/internal/topology"
)

// LDCClass is where a server is from the proxy's point of view (logical
// data center routing, odp-behaviour.md §5.7).
type LDCClass uint8

// LDC classes, best first.
const (
	SameIDC     LDCClass = iota // a zone of the proxy's IDC (everything, when LDC is off)
	SameRegion                  // another IDC of the proxy's region
	OtherRegion                 // elsewhere, or a server the cluster does not list
)

var ldcNames = [...]string{"SAME_IDC", "SAME_REGION", "OTHER_REGION"}

func (c LDCClass) String() string { return enumName(c, ldcNames[:]) }

// ldcView is how one IDC name classifies a table's zones. Immutable.
type ldcView struct {
	idc     string
	enabled bool
	zones   map[string]LDCClass // zone name → class
}

// ldcCache keeps the last view built for a Table (the IDC name rarely
// changes, so one slot is enough).
type ldcCache = atomic.Pointer[ldcView]

// ldc returns the LDC view of idc, ODP's matching: zones whose IDC equals
// the name (case-insensitively); else zones whose name starts with it;
// no match turns LDC off. Regions of the matched zones are SAME_REGION.
func (t *Table) ldc(idc string) *ldcView {
	if v := t.ldcLast.Load(); v != nil && v.idc == idc {
		return v
	}
	v := &ldcView{idc: idc}
	if idc != "" {
		matched := map[string]bool{}
		for name, z := range t.Zones {
			if strings.EqualFold(z.IDC, idc) {
				matched[name] = true
			}
		}
		if len(matched) == 0 {
			for name := range t.Zones {
				if len(name) >= len(idc) && strings.EqualFold(name[:len(idc)], idc) {
					matched[name] = true
				}
			}
		}
		if len(matched) > 0 {
			v.enabled = true
			regions := map[string]bool{}
			for name := range matched {
				regions[t.Zones[name].Region] = true
			}
			v.zones = make(map[string]LDCClass, len(t.Zones))
			for name, z := range t.Zones {
				switch {
				case matched[name]:
					v.zones[name] = SameIDC
				case regions[z.Region]:
					v.zones[name] = SameRegion
				default:
					v.zones[name] = OtherRegion
				}
			}
		}
	}
	t.ldcLast.Store(v)
	return v
}

// class returns the LDC class of a server (nil: not listed).
func (v *ldcView) class(s *topology.Server) LDCClass {
	if !v.enabled {
		return SameIDC
	}
	if s == nil || s.Zone == nil {
		return OtherRegion
	}
	if c, ok := v.zones[s.Zone.Name]; ok {
		return c
	}
	return OtherRegion
}
