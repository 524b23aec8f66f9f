//go:build tools

// Package tools names the commands scripts/testenv-build builds from other
// modules (kubectl, Helm and the helm-unittest plugin), so that go.mod keeps
// them and `go mod tidy` does not drop them; the build tag keeps it out of
// every build.
package tools

import (
	_ "github.com/helm-unittest/helm-unittest/cmd/helm-unittest"
	_ "helm.sh/helm/v3/cmd/helm"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
