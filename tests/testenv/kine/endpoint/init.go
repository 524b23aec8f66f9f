// Package endpoint stands in for kine's pkg/endpoint/init.go when
// scripts/testenv-build builds kine for the test bed: kine's own file of that
// name links every datastore driver it ships (MySQL, PostgreSQL, NATS with an
// embedded NATS server, t4 with its S3 client and Pebble, the in-memory and
// remote ones, and the split of two); the test bed runs SQLite alone, as k3s
// does by default (scripts/testenv-up). The build copies kine's module and
// writes this file over that one, so the other drivers and their libraries
// are neither compiled nor linked.
package endpoint

import (
	// SQLite: the datastore scripts/testenv-up gives kine.
	_ "github.com/k3s-io/kine/pkg/drivers/sqlite"
)
