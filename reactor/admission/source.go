package admission

import "net/netip"

// SourceKey is what a source is counted by: the address for IPv4, its
// /64 for IPv6 (one host commonly owns a whole /64).
func SourceKey(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p
	}
	return netip.PrefixFrom(a, a.BitLen())
}
