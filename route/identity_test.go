package route

import "testing"

func TestParseUsername(t *testing.T) {
	cases := []struct {
		in   string
		want Identity
	}{
		{"root", Identity{User: "root", ClusterID: -1}},
		{"root@sys", Identity{User: "root", Tenant: "sys", ClusterID: -1}},
		{"root@proxysys", Identity{User: "root", Tenant: "proxysys", ClusterID: -1}},
		{"app@test#obsim", Identity{User: "app", Tenant: "test", Cluster: "obsim", ClusterID: -1}},
		{"app@test#obsim:7", Identity{User: "app", Tenant: "test", Cluster: "obsim", ClusterID: 7}},
		{"app#obsim", Identity{User: "app", Cluster: "obsim", ClusterID: -1}},
		{"app@", Identity{User: "app", ClusterID: -1}},
		{"obsim:test:app", Identity{User: "app", Tenant: "test", Cluster: "obsim", ClusterID: -1}},
		{"obsim:test:app:7", Identity{User: "app", Tenant: "test", Cluster: "obsim", ClusterID: 7}},
		{"obsim-test-app", Identity{User: "app", Tenant: "test", Cluster: "obsim", ClusterID: -1}},
		{"obsim.test.app:3", Identity{User: "app", Tenant: "test", Cluster: "obsim", ClusterID: 3}},
		{"a.b", Identity{User: "a.b", ClusterID: -1}},
		{"x-y:z", Identity{User: "x-y:z", ClusterID: -1}},
	}
	for _, c := range cases {
		if got := ParseUsername(c.in, DefaultSeparators); got != c.want {
			t.Errorf("ParseUsername(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
	if ParseUsername("app@test", nil).FullUser() != "app@test" {
		t.Fatal("FullUser")
	}
}

func FuzzParseUsername(f *testing.F) {
	for _, s := range []string{"root@sys#c:1", "c:t:u:1", "a-b-c", "@#:", "..."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id := ParseUsername(s, DefaultSeparators)
		if len(id.User)+len(id.Tenant)+len(id.Cluster) > len(s) {
			t.Fatal("parts longer than input")
		}
	})
}
