//go:build !k8s_1_30

package main

import (
	"context"

	"github.com/spf13/cobra"
	kubeletapp "k8s.io/kubernetes/cmd/kubelet/app"
)

// newKubeletCommand is the upstream kubelet command; since v1.31 its
// constructor takes the context the kubelet runs under.
func newKubeletCommand() *cobra.Command {
	return kubeletapp.NewKubeletCommand(context.Background())
}
