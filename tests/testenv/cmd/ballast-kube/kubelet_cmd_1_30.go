//go:build k8s_1_30

package main

import (
	"github.com/spf13/cobra"
	kubeletapp "k8s.io/kubernetes/cmd/kubelet/app"
)

// newKubeletCommand is the upstream kubelet command of v1.30 (the oldest
// supported release, built with k8s-1.30/go.mod and the k8s_1_30 tag).
func newKubeletCommand() *cobra.Command {
	return kubeletapp.NewKubeletCommand()
}
