// Package metrics holds obgate's Prometheus metrics: one Registry per
// process, built in cmd and handed to the packages that count things, and
// the /metrics HTTP handler. Metric family names live in names.go, using
// ODP's `odp_*` names where ODP has the same family so that existing
// dashboards keep working.
//
// Hot paths must not look metrics up by name: they keep the *Counter,
// *Gauge or *Histogram they got once from the Registry, or, for the
// tenant families whose label sets are limited and swept (limited.go), a
// Slot filled on first use.
package metrics
