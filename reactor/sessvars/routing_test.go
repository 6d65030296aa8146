package sessvars

import "testing"

func TestRoutingVarsNote(t *testing.T) {
	var r Routing
	r.Note("ob_read_consistency", "'WEAK'", false)
	r.Note("ob_route_policy", "ONLY_READONLY_ZONE", false)
	r.Note("proxy_idc_name", "'hz1'", true)
	r.Note("proxy_route_policy", "'follower_first'", true)
	if !r.Weak || !r.OBRouteSet || r.OBRoutePolicy != 2 || r.IDC != "hz1" || r.RoutePolicy != "follower_first" {
		t.Fatalf("%+v", r)
	}
	r.Note("proxy_idc_name", "NULL", true)
	if r.IDC != "" {
		t.Fatalf("SET @proxy_idc_name = NULL left %q", r.IDC)
	}
}
