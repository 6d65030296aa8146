package reactor

import (
	"cmp"
	"slices"
)

func sortSessionInfos(s []SessionInfo) {
	slices.SortFunc(s, func(a, b SessionInfo) int { return cmp.Compare(a.ID, b.ID) })
}
