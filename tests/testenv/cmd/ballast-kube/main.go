// Command ballast-kube is the test control plane in one binary, hyperkube style:
// etcd, kube-apiserver, kube-scheduler, kube-controller-manager, and for the
// real nodes kubelet and kube-proxy, each the upstream command constructor at
// the version pinned in go.mod. One binary links the shared Kubernetes
// packages once. kubectl is not among them: the tests run it about once a
// second, and every start of this binary initializes the packages of all its
// components (about 0.1 CPU-second, where upstream's own kubectl command,
// built beside it by scripts/testenv-build, runs whole in half that).
//
// The component is the first argument (ballast-kube kube-apiserver --flags...)
// or the name the binary is called by (a symlink named kube-apiserver).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/pkg/kubelet"
)

// components maps a component's name to its entry point; each returns the
// process exit code. os.Args has already been rewritten to [name, flags...].
var components = map[string]func() int{
	"etcd": func() int {
		etcdmain.Main(os.Args) // exits the process itself on error
		return 0
	},
	"kube-apiserver": func() int { return runCobra(apiserver.NewAPIServerCommand()) },
	"kube-scheduler": func() int { return runCobra(scheduler.NewSchedulerCommand()) },
	"kube-controller-manager": func() int {
		return runCobra(controllermanager.NewControllerManagerCommand())
	},
	"kubelet":     runKubelet,
	"cluster-dns": runClusterDNS,
	"cri-cleanup": runCRICleanup,
	"kube-proxy":  func() int { return runCobra(proxy.NewProxyCommand()) },
}

// containerLogsDirEnv names the directory of the kubelet's container log
// symlinks. Upstream fixes it at /var/log/containers, which several kubelets on
// one machine would share (and each would garbage-collect the others' links).
const containerLogsDirEnv = "BALLAST_KUBELET_CONTAINER_LOGS_DIR"

func runKubelet() int {
	if dir := os.Getenv(containerLogsDirEnv); dir != "" {
		kubelet.ContainerLogsDir = dir
	}
	return runCobra(newKubeletCommand())
}

func runCobra(cmd *cobra.Command) int {
	cmd.SetArgs(os.Args[1:])
	return cli.Run(cmd)
}

func usage() {
	names := make([]string, 0, len(components))
	for name := range components {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "usage: ballast-kube COMPONENT [flags...]\ncomponents: %v\n", names)
}

func main() {
	name := filepath.Base(os.Args[0])
	if _, ok := components[name]; !ok {
		if len(os.Args) < 2 {
			usage()
			os.Exit(2)
		}
		name = os.Args[1]
		os.Args = os.Args[1:]
	}
	run, ok := components[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "ballast-kube: unknown component %q\n", name)
		usage()
		os.Exit(2)
	}
	os.Exit(run())
}
