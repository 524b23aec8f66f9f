// Command ballast-netpol enforces NetworkPolicy on one real node of the test
// cluster: kube-router's network policy controller (pkg/controllers/netpol,
// the version pinned in go.mod), started the way k3s starts it in its agent —
// informers for pods, namespaces and NetworkPolicies, the controller's own
// iptables and ipset handlers, its health checks — without kube-router's
// routing, service proxy and load-balancer parts, which the test cluster has
// from elsewhere (the CNI bridge, kube-proxy).
//
// It takes kube-router's own flags (--kubeconfig, --hostname-override,
// --service-cluster-ip-range, --iptables-sync-period, --health-port, ...) and
// refuses the ones that would ask for a part it does not run. It programs the
// iptables and ipsets of the network namespace it runs in, for the pods whose
// host IP is its node's InternalIP. SIGTERM or SIGINT stops it; the rules stay
// (as kube-router leaves them), for the namespace's owner to remove.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/cloudnativelabs/kube-router/v2/pkg/controllers/netpol"
	"github.com/cloudnativelabs/kube-router/v2/pkg/healthcheck"
	"github.com/cloudnativelabs/kube-router/v2/pkg/options"
	"github.com/spf13/pflag"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

func main() {
	config := options.NewKubeRouterConfig()
	config.AddFlags(pflag.CommandLine)
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	pflag.CommandLine.AddGoFlagSet(klogFlags)
	pflag.Parse()
	if config.HelpRequested {
		pflag.Usage()
		return
	}
	if err := run(config); err != nil {
		fmt.Fprintf(os.Stderr, "ballast-netpol: %v\n", err)
		os.Exit(1)
	}
}

// run checks config, starts the informers, the health check and the policy
// controller, and returns nil after SIGTERM or SIGINT once they have stopped;
// an error when the configuration is refused or the controller cannot start.
func run(config *options.KubeRouterConfig) error {
	if config.RunRouter || config.RunServiceProxy || config.RunLoadBalancer || !config.RunFirewall {
		return errors.New("only the firewall runs here: pass --run-firewall=true --run-router=false " +
			"--run-service-proxy=false --run-loadbalancer=false")
	}
	if config.EnableIPv6 || !config.EnableIPv4 {
		return errors.New("the test cluster is IPv4 only: --enable-ipv4=true --enable-ipv6=false")
	}
	restConfig, err := clientcmd.BuildConfigFromFlags(config.Master, config.Kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %q: %w", config.Kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	stopCh := make(chan struct{})
	factory := informers.NewSharedInformerFactory(client, 0)
	podInformer := factory.Core().V1().Pods().Informer()
	nsInformer := factory.Core().V1().Namespaces().Informer()
	npInformer := factory.Networking().V1().NetworkPolicies().Informer()
	factory.Start(stopCh)
	if err := waitForCaches(factory, config.CacheSyncTimeout, stopCh); err != nil {
		close(stopCh)
		return err
	}

	iptablesHandlers, ipsetHandlers, err := netpol.NewIPTablesHandlers(config)
	if err != nil {
		close(stopCh)
		return fmt.Errorf("iptables and ipset: %w", err)
	}
	npc, err := netpol.NewNetworkPolicyController(client, config, podInformer, npInformer, nsInformer,
		&sync.Mutex{}, iptablesHandlers, ipsetHandlers)
	if err != nil {
		close(stopCh)
		return fmt.Errorf("network policy controller: %w", err)
	}
	handlers := []struct {
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{{podInformer, npc.PodEventHandler}, {nsInformer, npc.NamespaceEventHandler},
		{npInformer, npc.NetworkPolicyEventHandler}}
	for _, h := range handlers {
		if _, err := h.informer.AddEventHandler(h.handler); err != nil {
			close(stopCh)
			return fmt.Errorf("event handler: %w", err)
		}
	}
	return runController(config, npc, stopCh)
}

// waitForCaches returns nil once every informer of factory has synced, an
// error after timeout.
func waitForCaches(factory informers.SharedInformerFactory, timeout time.Duration, stopCh chan struct{}) error {
	done := make(chan struct{})
	go func() {
		factory.WaitForCacheSync(stopCh)
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("the informers did not sync in %v (is the API server reachable?)", timeout)
	}
}

// runController runs the health check (its server on --health-port, 0 for
// none) and the policy controller until SIGTERM or SIGINT, then stops both
// and returns nil.
func runController(config *options.KubeRouterConfig, npc *netpol.NetworkPolicyController,
	stopCh chan struct{}) error {
	health, err := healthcheck.NewHealthController(config)
	if err != nil {
		close(stopCh)
		return fmt.Errorf("health check: %w", err)
	}
	// The controller sends heartbeats on this channel; RunCheck takes them.
	healthCh := make(chan *healthcheck.ControllerHeartbeat, 10)
	health.SetAlive()
	var wg sync.WaitGroup
	wg.Add(3)
	go health.RunServer(stopCh, &wg)
	go health.RunCheck(healthCh, stopCh, &wg)
	go npc.Run(healthCh, stopCh, &wg)
	klog.Infof("ballast-netpol: enforcing NetworkPolicy for the pods of node %s", config.HostnameOverride)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	sig := <-signals
	klog.Infof("ballast-netpol: %v, stopping", sig)
	close(stopCh)
	wg.Wait()
	return nil
}
