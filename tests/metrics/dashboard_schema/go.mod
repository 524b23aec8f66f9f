// ballast-dashboard-schema: the Grafana dashboards decoded strictly and
// validated by Grafana's own schema library (grafana-foundation-sdk,
// Apache-2.0), not by the Grafana server. A module of its own, apart from
// tests/testenv's: it shares no library with the control plane, and a change
// here must not rebuild the control plane (scripts/testenv-build's stamp
// covers every Go file of that module).
module ballast.io/dashboard-schema

go 1.26.0

require github.com/grafana/grafana-foundation-sdk/go v0.0.22
