// Package grafana holds no Go code to import: it is the home of connectd's
// Grafana dashboards (dashboards/), their provisioning files
// (provisioning/) and the Prometheus alert rules with their promtool unit
// tests (alerts/). Its tests check them: the dashboards' JSON (structure,
// grid, datasource variable, units, rate windows, documented metrics), the
// alert rules with promtool check rules and promtool test rules, and, with
// a real Prometheus scraping a real `connectd worker` running
// DatagenSource → AerospikeSink, that every panel query returns data.
//
// What this package must not do: generate metrics or depend on connectd's
// packages at run time; the dashboards and rules are plain files that
// Grafana and Prometheus read.
package grafana
