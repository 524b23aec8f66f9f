package main

// The kubelet's part for pods bound to the emulated nodes: run init containers
// in order, then the containers side by side as local processes; restart them
// by the pod's restartPolicy; report phase, conditions and container statuses;
// on deletion, stop the processes and remove the pod.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

const (
	maxBackoff   = 10 * time.Second // the kubelet's is 5 min; tests want quick restarts
	maxGrace     = 30 * time.Second
	logTailBytes = 4096 // FallbackToLogsOnError keeps this much of the log
)

// containerRun is one container's state as the agent knows it.
type containerRun struct {
	spec      *corev1.Container
	init      bool
	state     corev1.ContainerState
	lastState corev1.ContainerState
	restarts  int32
	id        string
	process   *os.Process
}

// podRun runs one pod; created when the agent first sees the pod bound to one
// of its nodes, dropped when the pod is deleted.
type podRun struct {
	a        *agent
	node     *nodeSpec
	pod      *corev1.Pod // as first seen; spec is immutable where it matters
	dir      string
	stop     chan struct{}
	stopOnce sync.Once
	grace    time.Duration

	mu          sync.Mutex // guards the fields below and serializes reports
	init        []*containerRun
	main        []*containerRun
	initialized bool
	phase       corev1.PodPhase
	startTime   metav1.Time
	reportMu    sync.Mutex
}

func newPodRun(a *agent, node *nodeSpec, pod *corev1.Pod) *podRun {
	r := &podRun{a: a, node: node, pod: pod.DeepCopy(), stop: make(chan struct{}),
		phase: corev1.PodPending, startTime: metav1.Now()}
	r.dir = filepath.Join(a.stateDir, "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
	waiting := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	for i := range r.pod.Spec.InitContainers {
		r.init = append(r.init, &containerRun{spec: &r.pod.Spec.InitContainers[i], init: true,
			state: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}})
	}
	for i := range r.pod.Spec.Containers {
		r.main = append(r.main, &containerRun{spec: &r.pod.Spec.Containers[i], state: waiting})
	}
	return r
}

func (r *podRun) log() *slog.Logger {
	return slog.With("pod", r.pod.Namespace+"/"+r.pod.Name, "node", r.node.Name)
}

// requestStop asks the pod to stop (it is being deleted) with the given grace.
func (r *podRun) requestStop(grace time.Duration) {
	r.stopOnce.Do(func() {
		r.grace = min(grace, maxGrace)
		close(r.stop)
	})
}

func (r *podRun) stopping() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

// run is the pod's whole life; it returns once the pod has terminated or has
// been stopped (and then removed from the API server: it says whether it did).
func (r *podRun) run(ctx context.Context) (removed bool) {
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		r.log().Info("cannot create pod directory", "err", err)
	}
	r.report(ctx)
	ok := true
	for _, c := range r.init {
		if ok = r.runContainer(ctx, c) && !r.stopping(); !ok {
			break
		}
	}
	if ok {
		r.mu.Lock()
		r.initialized = true
		r.mu.Unlock()
		var wg sync.WaitGroup
		for _, c := range r.main {
			wg.Add(1)
			go func() { defer wg.Done(); r.runContainer(ctx, c) }()
		}
		wg.Wait()
	}
	r.mu.Lock()
	phase := r.finalPhase()
	r.phase = phase
	r.mu.Unlock()
	if r.stopping() {
		r.remove(ctx)
		return true
	}
	r.report(ctx)
	r.log().Info("pod finished", "phase", phase)
	return false
}

// finalPhase: Succeeded when every container (init ones included) ended with
// 0, Failed otherwise. Requires r.mu.
func (r *podRun) finalPhase() corev1.PodPhase {
	for _, c := range append(append([]*containerRun{}, r.init...), r.main...) {
		if t := c.state.Terminated; t == nil || t.ExitCode != 0 {
			return corev1.PodFailed
		}
	}
	return corev1.PodSucceeded
}

// runContainer runs c until it ends for good (restartPolicy) or the pod stops;
// returns whether its last run succeeded.
func (r *podRun) runContainer(ctx context.Context, c *containerRun) bool {
	if reason, message, missing := r.a.missingImage(c.spec); missing {
		return r.waitForImage(ctx, c, reason, message)
	}
	for attempt := 0; ; attempt++ {
		exitCode, reason, message := r.runOnce(ctx, c)
		r.mu.Lock()
		terminated := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exitCode, Reason: reason, Message: message, ContainerID: c.id,
			FinishedAt: metav1.Now(), StartedAt: startedAt(c.state),
		}}
		c.state, c.process = terminated, nil
		restart := !r.stopping() && r.shouldRestart(c, exitCode)
		if restart {
			c.lastState, c.restarts = terminated, c.restarts+1
			c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off restarting failed container %s", c.spec.Name)}}
		}
		r.mu.Unlock()
		r.report(ctx)
		if !restart {
			return exitCode == 0
		}
		backoff := min(time.Second<<attempt, maxBackoff)
		select {
		case <-r.stop:
			return false
		case <-ctx.Done():
			return false
		case <-time.After(backoff):
		}
	}
}

// waitForImage leaves c waiting, as the kubelet leaves a container whose
// image it cannot get, until the pod stops; returns false (it never ran).
func (r *podRun) waitForImage(ctx context.Context, c *containerRun, reason, message string) bool {
	r.mu.Lock()
	c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
	r.mu.Unlock()
	r.log().Info("container image missing", "container", c.spec.Name, "image", c.spec.Image, "reason", reason)
	r.report(ctx)
	select {
	case <-r.stop:
	case <-ctx.Done():
	}
	return false
}

func startedAt(s corev1.ContainerState) metav1.Time {
	if s.Running != nil {
		return s.Running.StartedAt
	}
	return metav1.Now()
}

// shouldRestart applies the pod's restartPolicy (init containers restart on
// failure unless the policy is Never). Requires r.mu.
func (r *podRun) shouldRestart(c *containerRun, exitCode int32) bool {
	switch r.pod.Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return exitCode != 0
	default:
		return exitCode != 0 || !c.init
	}
}

// emptyDir is the directory of the pod's emptyDir volume name, "" when the
// pod has no such emptyDir volume.
func (r *podRun) emptyDir(name string) string {
	for _, v := range r.pod.Spec.Volumes {
		if v.Name == name && v.EmptyDir != nil {
			return filepath.Join(r.dir, "volumes", name)
		}
	}
	return ""
}

// mounts maps each mountPath of c that mounts an emptyDir volume to the
// volume's directory (created, writable by every user, as an emptyDir is),
// and each that mounts a Secret volume to a directory holding the Secret's
// files (secretVolume); other volume kinds are not mapped. Fails, as the
// kubelet's mount does, when a non-optional Secret or key is missing.
func (r *podRun) mounts(ctx context.Context, c *corev1.Container) (map[string]string, error) {
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		if dir := r.emptyDir(m.Name); dir != "" {
			if err := os.MkdirAll(dir, 0o777); err == nil {
				os.Chmod(dir, 0o777)
			}
			mounts[m.MountPath] = dir
			continue
		}
		for _, v := range r.pod.Spec.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			dir, err := r.secretVolume(ctx, v.Name, v.Secret)
			if err != nil {
				return nil, err
			}
			mounts[m.MountPath] = dir
		}
	}
	return mounts, nil
}

// secretVolume writes the Secret's keys (or the items it names, at their
// paths) as files of the pod's directory volumes/NAME, each with the
// volume's defaultMode (the item's mode when it gives one), as the kubelet's
// Secret volume holds them; returns the directory.
func (r *podRun) secretVolume(ctx context.Context, name string, source *corev1.SecretVolumeSource) (string, error) {
	dir := filepath.Join(r.dir, "volumes", name)
	optional := source.Optional != nil && *source.Optional
	secret, err := r.a.cs.CoreV1().Secrets(r.pod.Namespace).Get(ctx, source.SecretName, metav1.GetOptions{})
	if err != nil && !(optional && apierrors.IsNotFound(err)) {
		return "", fmt.Errorf("MountVolume.SetUp failed for volume %q: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if secret == nil || err != nil {
		return dir, nil
	}
	mode := int32(0o644)
	if source.DefaultMode != nil {
		mode = *source.DefaultMode
	}
	items := source.Items
	if len(items) == 0 {
		for key := range secret.Data {
			items = append(items, corev1.KeyToPath{Key: key, Path: key})
		}
	}
	for _, item := range items {
		data, ok := secret.Data[item.Key]
		if !ok {
			if optional {
				continue
			}
			return "", fmt.Errorf("MountVolume.SetUp failed for volume %q: couldn't find key %s in Secret %s/%s",
				name, item.Key, r.pod.Namespace, source.SecretName)
		}
		fileMode := mode
		if item.Mode != nil {
			fileMode = *item.Mode
		}
		path := filepath.Join(dir, filepath.Clean("/"+item.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, data, os.FileMode(fileMode)); err != nil {
			return "", err
		}
		os.Chmod(path, os.FileMode(fileMode))
	}
	return dir, nil
}

// runOnce starts c's process and waits for it (or for the pod to stop).
// Returns the exit code, the termination reason and message.
func (r *podRun) runOnce(ctx context.Context, c *containerRun) (int32, string, string) {
	env, envMap, err := r.a.containerEnv(ctx, r.pod, c.spec)
	var argv []string
	var mounts map[string]string
	if err == nil {
		mounts, err = r.mounts(ctx, c.spec)
	}
	if err == nil {
		argv, err = r.a.commandLine(c.spec, envMap, mounts)
		// A variable naming a file of a volume (BALLAST_TOKEN_FILE) names
		// it where the volume is on this host.
		for i, entry := range env {
			if k, v, ok := strings.Cut(entry, "="); ok {
				env[i] = k + "=" + underMounts(v, mounts)
			}
		}
	}
	if err != nil {
		r.log().Info("container cannot run", "container", c.spec.Name, "err", err)
		return 128, "ContainerCannotRun", err.Error()
	}
	if r.node.speed > 0 && r.a.cgroups != nil {
		if dir, err := r.a.cgroups.nodeGroup(r.node.Name, r.node.speed); err == nil {
			argv = append([]string{r.a.self, "shim", dir}, argv...)
		} else {
			r.log().Info("cannot set up the node's cpu cgroup; running unthrottled", "err", err)
		}
	}
	logPath := filepath.Join(r.dir, c.spec.Name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 128, "ContainerCannotRun", err.Error()
	}
	defer logFile.Close()
	logStart, _ := logFile.Seek(0, 2)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, logFile, logFile
	cmd.Dir = r.dir
	if wd := c.spec.WorkingDir; wd != "" {
		if st, err := os.Stat(wd); err == nil && st.IsDir() {
			cmd.Dir = wd
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return 128, "StartError", err.Error()
	}
	r.mu.Lock()
	c.process = cmd.Process
	c.id = fmt.Sprintf("ballast://%d", cmd.Process.Pid)
	c.state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	if !c.init {
		r.phase = corev1.PodRunning
	}
	r.mu.Unlock()
	r.log().Info("container started", "container", c.spec.Name, "pid", cmd.Process.Pid, "argv", argv)
	r.report(ctx)

	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-r.stop:
		waitErr = killGroup(cmd.Process.Pid, r.grace, done)
	case <-ctx.Done():
		waitErr = killGroup(cmd.Process.Pid, 0, done)
	}
	code, reason := exitStatus(cmd, waitErr)
	message := ""
	if code != 0 && c.spec.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError {
		message = logTail(logPath, logStart)
	}
	r.log().Info("container exited", "container", c.spec.Name, "code", code)
	return code, reason, message
}

// killGroup sends SIGTERM to the process group, SIGKILL after grace, and
// returns the process's wait result.
func killGroup(pid int, grace time.Duration, done chan error) error {
	syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case err := <-done:
		syscall.Kill(-pid, syscall.SIGKILL) // whatever else the command left behind
		return err
	case <-time.After(grace):
		syscall.Kill(-pid, syscall.SIGKILL)
		return <-done
	}
}

// exitStatus maps a wait result to the kubelet's exit code (128 + signal for a
// signalled process) and reason.
func exitStatus(cmd *exec.Cmd, err error) (int32, string) {
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return 128, "Error"
	}
	if ws.Signaled() {
		return int32(128 + ws.Signal()), "Error"
	}
	if ws.ExitStatus() == 0 {
		return 0, "Completed"
	}
	return int32(ws.ExitStatus()), "Error"
}

func logTail(path string, from int64) string {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) < from {
		return ""
	}
	data = data[from:]
	if len(data) > logTailBytes {
		data = data[len(data)-logTailBytes:]
	}
	return strings.TrimRight(string(data), "\n")
}

// report writes the pod's status to the API server (the status subresource),
// keeping conditions the agent does not own (PodScheduled, ...).
func (r *podRun) report(ctx context.Context) {
	r.reportMu.Lock()
	defer r.reportMu.Unlock()
	pods := r.a.cs.CoreV1().Pods(r.pod.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(ctx, r.pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.UID != r.pod.UID {
			return apierrors.NewNotFound(corev1.Resource("pods"), r.pod.Name)
		}
		r.mu.Lock()
		r.fillStatus(&pod.Status)
		r.mu.Unlock()
		_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		r.log().Info("status update failed", "err", err)
	}
}

// fillStatus writes the agent's view into status. Requires r.mu.
func (r *podRun) fillStatus(status *corev1.PodStatus) {
	status.Phase = r.phase
	status.HostIP, status.PodIP = podIP, podIP
	status.HostIPs = []corev1.HostIP{{IP: podIP}}
	status.PodIPs = []corev1.PodIP{{IP: podIP}}
	status.StartTime = &r.startTime
	status.InitContainerStatuses = containerStatuses(r.init)
	status.ContainerStatuses = containerStatuses(r.main)
	allReady := r.initialized
	for _, c := range r.main {
		allReady = allReady && c.state.Running != nil
	}
	done := r.phase == corev1.PodSucceeded || r.phase == corev1.PodFailed
	setCondition(status, corev1.PodInitialized, r.initialized || done, "")
	readyReason := ""
	if !allReady {
		readyReason = "ContainersNotReady"
		if done {
			readyReason = "PodCompleted"
		}
	}
	setCondition(status, corev1.ContainersReady, allReady, readyReason)
	setCondition(status, corev1.PodReady, allReady, readyReason)
}

func containerStatuses(runs []*containerRun) []corev1.ContainerStatus {
	var list []corev1.ContainerStatus
	for _, c := range runs {
		list = append(list, corev1.ContainerStatus{
			Name: c.spec.Name, Image: c.spec.Image, ImageID: "ballast-node-agent://" + c.spec.Image,
			ContainerID: c.id, State: c.state, LastTerminationState: c.lastState,
			Ready: c.state.Running != nil, RestartCount: c.restarts,
			Started: ptr.To(c.state.Running != nil),
		})
	}
	return list
}

func setCondition(status *corev1.PodStatus, t corev1.PodConditionType, ok bool, reason string) {
	value := corev1.ConditionFalse
	if ok {
		value = corev1.ConditionTrue
	}
	for i := range status.Conditions {
		c := &status.Conditions[i]
		if c.Type == t {
			if c.Status != value {
				c.Status, c.LastTransitionTime = value, metav1.Now()
			}
			c.Reason = reason
			return
		}
	}
	status.Conditions = append(status.Conditions, corev1.PodCondition{
		Type: t, Status: value, Reason: reason, LastTransitionTime: metav1.Now()})
}

// remove finishes a deletion the way the kubelet does: once the processes are
// gone, delete the pod with grace 0 (for this pod's UID only).
func (r *podRun) remove(ctx context.Context) {
	err := r.a.cs.CoreV1().Pods(r.pod.Namespace).Delete(ctx, r.pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      metav1.NewUIDPreconditions(string(r.pod.UID)),
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		r.log().Info("final pod deletion failed", "err", err)
		return
	}
	os.RemoveAll(r.dir)
	r.log().Info("pod removed")
}
