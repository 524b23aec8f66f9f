// Command ballast-node-agent plays the kubelet for emulated Raspberry Pi nodes
// in Ballast's test control plane. It registers the nodes of a node file, keeps
// them Ready (Leases in kube-node-lease), runs the containers of pods bound to
// them as local processes (the worker image mapped to the locally built
// ballast-worker), throttles each node to its emulated speed with a CPU
// cgroup, and reports pod phase and container statuses back.
//
// It is a test tool: no images, probes, ports, exec or logs API; of volumes,
// only emptyDir and Secret, each as a directory of the pod that words of the
// command and values of the environment under the mountPath are moved to
// (readOnly is not enforced).
// Containers share the host's network (pod IP 127.0.0.1) and file system.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// agent is the state shared by all emulated nodes.
type agent struct {
	cs           kubernetes.Interface
	nodes        map[string]*nodeSpec
	stateDir     string
	workerImage  string // an image whose name contains this runs workerBinary
	workerBinary string
	apiHost      string // given to containers as KUBERNETES_SERVICE_HOST/PORT
	apiPort      string
	self         string // this executable, for the cgroup shim
	cgroups      *cgroups

	mu   sync.Mutex
	pods map[types.UID]*podEntry
	wg   sync.WaitGroup
}

type podEntry struct {
	run      *podRun
	done     bool // run has returned
	removing bool // the final deletion has been started
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "shim" {
		os.Exit(runShim(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "print-nodes" {
		os.Exit(printNodes(os.Args[2:]))
	}
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of an identity allowed to manage nodes and pods (required)")
	nodesPath := flag.String("nodes", "", "node file: the nodes to register (required)")
	stateDir := flag.String("state-dir", "/tmp/ballast-node-agent", "directory for pod working directories and logs")
	workerImage := flag.String("worker-image", "ballast-worker", "images whose name contains this run the local worker binary")
	workerBinary := flag.String("worker-binary", os.Getenv("BALLAST_WORKER_BINARY"),
		"the locally built ballast-worker (default $BALLAST_WORKER_BINARY)")
	cgroupName := flag.String("cgroup", "ballast-testenv", "name of the agent's CPU cgroup; empty: no emulated speeds")
	leaseSeconds := flag.Int("lease-seconds", 40, "node lease duration")
	heartbeatEvery := flag.Duration("heartbeat", 10*time.Second, "node lease renewal interval")
	var logs logServer
	flag.IntVar(&logs.port, "kubelet-port", 0, "serve container logs (the kubelet API's /containerLogs) on 127.0.0.1:PORT; 0: off")
	flag.StringVar(&logs.cert, "tls-cert-file", "", "serving certificate of the log server")
	flag.StringVar(&logs.key, "tls-private-key-file", "", "its key")
	flag.StringVar(&logs.clientCA, "client-ca-file", "", "CA of the clients (the API server) the log server accepts")
	flag.Parse()
	if *kubeconfig == "" || *nodesPath == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: ballast-node-agent --kubeconfig FILE --nodes FILE [flags]")
		flag.PrintDefaults()
		os.Exit(2)
	}
	if err := run(*kubeconfig, *nodesPath, *stateDir, *workerImage, *workerBinary, *cgroupName,
		int32(*leaseSeconds), *heartbeatEvery, logs); err != nil {
		fmt.Fprintf(os.Stderr, "ballast-node-agent: %v\n", err)
		os.Exit(1)
	}
}

// logServer configures the container log endpoint.
type logServer struct {
	port                int
	cert, key, clientCA string
}

func run(kubeconfig, nodesPath, stateDir, workerImage, workerBinary, cgroupName string,
	leaseSeconds int32, heartbeatEvery time.Duration, logs logServer) error {
	specs, err := loadNodes(nodesPath)
	if err != nil {
		return err
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// Each node renews its Lease every heartbeat (10 s): 1,000 nodes need
	// 100 requests a second before any pod is started.
	config.QPS = max(50, float32(len(specs))/2)
	config.Burst = max(100, len(specs))
	config.UserAgent = "ballast-node-agent"
	cs, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	version, err := cs.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("reaching the API server: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	a := &agent{cs: cs, nodes: map[string]*nodeSpec{}, stateDir: stateDir, workerImage: workerImage,
		workerBinary: workerBinary, self: self, cgroups: newCgroups(cgroupName), pods: map[types.UID]*podEntry{}}
	if u, err := url.Parse(config.Host); err == nil {
		a.apiHost, a.apiPort, _ = net.SplitHostPort(u.Host)
	}

	if logs.port != 0 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(logs.port))
		if err := a.serveLogs(addr, logs.cert, logs.key, logs.clientCA); err != nil {
			return fmt.Errorf("log server: %w", err)
		}
	}

	// A kubelet renews its Lease every 10 s; a test control plane sharing two
	// cores with a thousand nodes' workers cannot take 100 writes a second
	// besides, so past 500 nodes the agent renews every 20 s (still half the
	// node-monitor grace period of 40 s).
	if len(specs) > 500 && heartbeatEvery < 20*time.Second {
		heartbeatEvery = 20 * time.Second
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	var heartbeats sync.WaitGroup
	// Sixteen registrations at a time: a thousand nodes, one by one, take
	// minutes on a busy machine (three requests each).
	var registering sync.WaitGroup
	slots := make(chan struct{}, 16)
	errs := make(chan error, len(specs))
	for i := range specs {
		spec := &specs[i]
		a.nodes[spec.Name] = spec
		registering.Add(1)
		slots <- struct{}{}
		go func() {
			defer registering.Done()
			defer func() { <-slots }()
			node, err := registerNode(ctx, cs, spec, version.GitVersion, int32(logs.port))
			if err != nil {
				errs <- err
				return
			}
			heartbeats.Add(1)
			go func() {
				defer heartbeats.Done()
				heartbeat(ctx, cs, node, leaseSeconds, heartbeatEvery, time.Minute)
			}()
			slog.Info("node registered", "node", spec.Name, "speed", spec.speed)
		}()
	}
	registering.Wait()
	close(errs)
	if err := <-errs; err != nil {
		cancel()
		return err
	}

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName!=" }))
	podInformer := factory.Core().V1().Pods().Informer()
	podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.sync(ctx, obj) },
		UpdateFunc: func(_, obj any) { a.sync(ctx, obj) },
		DeleteFunc: func(obj any) { a.forget(obj) },
	})
	factory.Start(ctx.Done())
	slog.Info("agent running", "nodes", len(specs), "kube", version.GitVersion)
	<-ctx.Done()

	slog.Info("stopping: killing all containers")
	factory.Shutdown()
	a.wg.Wait()
	heartbeats.Wait()
	if a.cgroups != nil {
		a.cgroups.removeAll()
	}
	return nil
}

// sync acts on the latest state of a pod: start it if it is new and bound to
// one of our nodes, stop it if it is being deleted.
func (a *agent) sync(ctx context.Context, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	node, ours := a.nodes[pod.Spec.NodeName]
	if !ours {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	entry := a.pods[pod.UID]
	deleting := pod.DeletionTimestamp != nil
	grace := time.Duration(0)
	if pod.DeletionGracePeriodSeconds != nil {
		grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	}
	switch {
	case entry == nil && deleting:
		// Never started (or finished before this agent started): just remove it.
		a.start(ctx, func() { newPodRun(a, node, pod).remove(ctx) })
	case entry == nil && (pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed):
		// Finished under an earlier agent; nothing to run.
	case entry == nil:
		r := newPodRun(a, node, pod)
		entry = &podEntry{run: r}
		a.pods[pod.UID] = entry
		a.start(ctx, func() {
			removed := r.run(ctx)
			a.mu.Lock()
			entry.done = true
			// A deletion that came after run's last look at its stop found
			// the pod not yet done and only asked it to stop (the last case
			// below); no later event comes for a pod that no longer changes,
			// so it is removed here, or it would stay terminating for good.
			late := !removed && r.stopping() && !entry.removing
			if late {
				entry.removing = true
			}
			a.mu.Unlock()
			if late {
				r.remove(ctx)
			}
		})
	case deleting && entry.done && !entry.removing:
		entry.removing = true
		a.start(ctx, func() { entry.run.remove(ctx) })
	case deleting:
		entry.run.requestStop(grace)
	}
}

func (a *agent) start(ctx context.Context, f func()) {
	if ctx.Err() != nil {
		return
	}
	a.wg.Add(1)
	go func() { defer a.wg.Done(); f() }()
}

// forget drops a deleted pod, stopping its processes if it still runs (a
// forced deletion skips the graceful path).
func (a *agent) forget(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if entry := a.pods[pod.UID]; entry != nil {
		entry.run.requestStop(0)
		delete(a.pods, pod.UID)
	}
}
