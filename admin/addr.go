package admin

import "net"

func hostPart(hp string) string {
	if h, _, err := net.SplitHostPort(hp); err == nil {
		return h
	}
	return hp
}

func portPart(hp string) string {
	if _, p, err := net.SplitHostPort(hp); err == nil {
		return p
	}
	return ""
}
