package main

// Containers as local processes: the command line (with the worker image
// mapped to the locally built binary), the environment (plain values, the
// downward API, ConfigMap and Secret references read from the API server), and
// the CPU cgroup that gives a node its emulated speed.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podresource "k8s.io/kubernetes/pkg/api/v1/resource"
	"k8s.io/kubernetes/pkg/fieldpath"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

// podIP is every pod's (and node's) address: all processes share the host's
// loopback network.
const podIP = "127.0.0.1"

// commandLine is the argv that runs container c: its command and args with
// $(VAR) references expanded, words under a mounted emptyDir's mountPath
// moved to that volume's directory (mounts: mountPath -> directory), and an
// image whose name contains workerImage mapped to workerBinary. Fails when
// there is nothing to run locally.
func (a *agent) commandLine(c *corev1.Container, env map[string]string, mounts map[string]string) ([]string, error) {
	mapping := expansion.MappingFuncFor(env)
	var argv []string
	for _, s := range append(append([]string{}, c.Command...), c.Args...) {
		argv = append(argv, underMounts(expansion.Expand(s, mapping), mounts))
	}
	isWorker := a.workerImage != "" && strings.Contains(c.Image, a.workerImage)
	if isWorker {
		if len(c.Command) == 0 {
			argv = append([]string{"ballast-worker"}, argv...)
		}
		if filepath.Base(argv[0]) == "ballast-worker" {
			if a.workerBinary == "" {
				return nil, fmt.Errorf("image %s maps to the local ballast-worker, but no --worker-binary "+
					"(or BALLAST_WORKER_BINARY) is set", c.Image)
			}
			if _, err := os.Stat(a.workerBinary); err != nil {
				return nil, fmt.Errorf("image %s maps to %s, which is missing (build it with scripts/build)",
					c.Image, a.workerBinary)
			}
			argv[0] = a.workerBinary
		}
	}
	if len(c.Command) == 0 && !isWorker {
		return nil, fmt.Errorf("image %s has no local mapping; give the container a command", c.Image)
	}
	return argv, nil
}

// underMounts is word with a leading mountPath (the whole word, or followed by
// '/') replaced by its volume's directory; the longest mountPath wins.
func underMounts(word string, mounts map[string]string) string {
	best := ""
	for path := range mounts {
		if (word == path || strings.HasPrefix(word, strings.TrimSuffix(path, "/")+"/")) && len(path) > len(best) {
			best = path
		}
	}
	if best == "" {
		return word
	}
	return mounts[best] + strings.TrimPrefix(word, strings.TrimSuffix(best, "/"))
}

// missingImage says whether container c's image is one the agent has no
// local mapping for (not the worker image, and no command to run as is),
// and the waiting reason and message the kubelet would report: with
// imagePullPolicy Never, ErrImageNeverPull; otherwise ErrImagePull (there is
// no registry to pull from).
func (a *agent) missingImage(c *corev1.Container) (string, string, bool) {
	if len(c.Command) > 0 || (a.workerImage != "" && strings.Contains(c.Image, a.workerImage)) {
		return "", "", false
	}
	if c.ImagePullPolicy == corev1.PullNever {
		return "ErrImageNeverPull", fmt.Sprintf("Container image %q is not present with pull policy of Never", c.Image), true
	}
	return "ErrImagePull", fmt.Sprintf("failed to pull image %q: the test bed's node agent has no registry", c.Image), true
}

// containerEnv is the environment of container c of pod, in order: a base
// (PATH, HOSTNAME, the API server's address), envFrom, then env. Fails, as the
// kubelet does, when a non-optional ConfigMap, Secret or key is missing.
func (a *agent) containerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container) ([]string, map[string]string, error) {
	env := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := env[k]; !ok {
			order = append(order, k)
		}
		env[k] = v
	}
	set("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	set("HOSTNAME", pod.Name)
	if a.apiHost != "" {
		set("KUBERNETES_SERVICE_HOST", a.apiHost)
		set("KUBERNETES_SERVICE_PORT", a.apiPort)
	}
	for _, from := range c.EnvFrom {
		data, err := a.envFromData(ctx, pod.Namespace, from)
		if err != nil {
			return nil, nil, err
		}
		for k, v := range data {
			set(from.Prefix+k, v)
		}
	}
	for _, e := range c.Env {
		value, ok, err := a.envValue(ctx, pod, c, e, env)
		if err != nil {
			return nil, nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			set(e.Name, value)
		}
	}
	list := make([]string, 0, len(order))
	for _, k := range order {
		list = append(list, k+"="+env[k])
	}
	return list, env, nil
}

func (a *agent) envFromData(ctx context.Context, namespace string, from corev1.EnvFromSource) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		cm, err := a.cs.CoreV1().ConfigMaps(namespace).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && ptrTrue(from.ConfigMapRef.Optional) {
			return nil, nil
		} else if err != nil {
			return nil, fmt.Errorf("envFrom configmap %s: %w", from.ConfigMapRef.Name, err)
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		s, err := a.cs.CoreV1().Secrets(namespace).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && ptrTrue(from.SecretRef.Optional) {
			return nil, nil
		} else if err != nil {
			return nil, fmt.Errorf("envFrom secret %s: %w", from.SecretRef.Name, err)
		}
		data := map[string]string{}
		for k, v := range s.Data {
			data[k] = string(v)
		}
		return data, nil
	}
	return nil, nil
}

// envValue resolves one env entry; ok is false for an optional reference that
// is missing (the variable is then unset).
func (a *agent) envValue(ctx context.Context, pod *corev1.Pod, c *corev1.Container, e corev1.EnvVar,
	env map[string]string) (value string, ok bool, err error) {
	from := e.ValueFrom
	switch {
	case from == nil:
		return expansion.Expand(e.Value, expansion.MappingFuncFor(env)), true, nil
	case from.FieldRef != nil:
		v, err := podField(pod, from.FieldRef.FieldPath)
		return v, err == nil, err
	case from.ResourceFieldRef != nil:
		v, err := podresource.ExtractContainerResourceValue(from.ResourceFieldRef, c)
		return v, err == nil, err
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := a.cs.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return "", false, optionalMissing(err, ref.Optional, "configmap "+ref.Name)
		}
		v, found := cm.Data[ref.Key]
		if !found {
			return "", false, optionalMissing(apierrors.NewNotFound(corev1.Resource("configmaps"),
				ref.Name+"/"+ref.Key), ref.Optional, "key "+ref.Key)
		}
		return v, true, nil
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := a.cs.CoreV1().Secrets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return "", false, optionalMissing(err, ref.Optional, "secret "+ref.Name)
		}
		v, found := s.Data[ref.Key]
		if !found {
			return "", false, optionalMissing(apierrors.NewNotFound(corev1.Resource("secrets"),
				ref.Name+"/"+ref.Key), ref.Optional, "key "+ref.Key)
		}
		return string(v), true, nil
	}
	return "", false, fmt.Errorf("unsupported valueFrom")
}

func optionalMissing(err error, optional *bool, what string) error {
	if apierrors.IsNotFound(err) && ptrTrue(optional) {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// podField is the downward API: the fields the kubelet fills in itself, and
// metadata.* through the apiserver's own field path code.
func podField(pod *corev1.Pod, path string) (string, error) {
	switch path {
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs", "status.hostIP", "status.hostIPs":
		return podIP, nil
	}
	return fieldpath.ExtractFieldPathAsString(pod, path)
}

// cgroups gives each emulated node a CPU cgroup whose quota is its speed.
// Works with cgroup v1 (the cpu controller's cfs_quota_us) and v2 (cpu.max).
type cgroups struct {
	root string // the agent's group, e.g. /sys/fs/cgroup/cpu/ballast-testenv
	v2   bool
}

const cfsPeriodMicros = 100000

// newCgroups prepares the agent's parent group; returns nil (no throttling,
// logged) when the machine offers no writable CPU controller.
func newCgroups(name string) *cgroups {
	if name == "" {
		return nil
	}
	var g *cgroups
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); err == nil {
		g = &cgroups{root: filepath.Join("/sys/fs/cgroup/cpu", name)}
	} else if data, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err == nil &&
		strings.Contains(string(data), "cpu") {
		g = &cgroups{root: filepath.Join("/sys/fs/cgroup", name), v2: true}
	} else {
		slog.Info("no cpu cgroup controller; emulated speeds are not applied")
		return nil
	}
	err := os.MkdirAll(g.root, 0o755)
	if err == nil && g.v2 {
		err = os.WriteFile(filepath.Join(g.root, "cgroup.subtree_control"), []byte("+cpu"), 0o644)
	}
	if err == nil {
		err = g.raiseWeight(g.root)
	}
	if err != nil {
		slog.Info("cannot create cpu cgroup; emulated speeds are not applied", "dir", g.root, "err", err)
		return nil
	}
	return g
}

// nodeGroup creates (or updates) the node's group with a quota of speed cores
// and returns its directory.
func (g *cgroups) nodeGroup(node string, speed float64) (string, error) {
	dir := filepath.Join(g.root, node)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := g.raiseWeight(dir); err != nil {
		return "", err
	}
	quota := strconv.Itoa(int(speed * cfsPeriodMicros))
	if g.v2 {
		return dir, os.WriteFile(filepath.Join(dir, "cpu.max"),
			[]byte(quota+" "+strconv.Itoa(cfsPeriodMicros)), 0o644)
	}
	if err := os.WriteFile(filepath.Join(dir, "cpu.cfs_period_us"), []byte(strconv.Itoa(cfsPeriodMicros)), 0o644); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte(quota), 0o644)
}

// raiseWeight gives the group ten times the default CPU weight, so that on a
// busy machine (a parallel build) a node still gets the CPU its quota allows:
// the quota is a ceiling, the weight what wins it under contention.
func (g *cgroups) raiseWeight(dir string) error {
	if g.v2 {
		return os.WriteFile(filepath.Join(dir, "cpu.weight"), []byte("1000"), 0o644)
	}
	return os.WriteFile(filepath.Join(dir, "cpu.shares"), []byte("10240"), 0o644)
}

// removeAll removes the node groups and the agent's group (best effort: a
// group still holding processes stays).
func (g *cgroups) removeAll() {
	entries, _ := os.ReadDir(g.root)
	for _, e := range entries {
		if e.IsDir() {
			os.Remove(filepath.Join(g.root, e.Name()))
		}
	}
	os.Remove(g.root)
}

// runShim is the "shim" subcommand: it moves itself into a cgroup and then
// becomes the container's command, so the process never runs outside it.
//
//	ballast-node-agent shim CGROUP_DIR COMMAND [ARGS...]
func runShim(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: ballast-node-agent shim CGROUP_DIR COMMAND [ARGS...]")
		return 2
	}
	pid := []byte(strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(filepath.Join(args[0], "cgroup.procs"), pid, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "ballast-node-agent shim: joining cgroup %s: %v\n", args[0], err)
		return 126
	}
	return execCommand(args[1:])
}

func execCommand(argv []string) int {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "ballast-node-agent: %v\n", err)
		return 127
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "ballast-node-agent: exec %s: %v\n", path, err)
	return 126
}
