package main

// Emulated nodes: the node file, Node registration, and the heartbeats (a Lease
// in kube-node-lease renewed every few seconds, the Ready condition refreshed
// every minute) that keep the node lifecycle controller from marking them
// NotReady.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// speedAnnotation holds a node's emulated CPU, in host cores ("0.5").
const speedAnnotation = "ballast.io/emulated-speed"

const nodeLeaseNamespace = "kube-node-lease"

// nodeSpec is one entry of the node file.
type nodeSpec struct {
	Name        string              `json:"name"`
	Labels      map[string]string   `json:"labels,omitempty"`
	Annotations map[string]string   `json:"annotations,omitempty"`
	Capacity    corev1.ResourceList `json:"capacity"`
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`

	speed float64 // host cores, 0 = no limit
}

type nodeFile struct {
	Nodes []nodeSpec `json:"nodes"`
}

// loadNodes reads and checks the node file; the error names the file and node.
func loadNodes(path string) ([]nodeSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var file nodeFile
	if err := yaml.UnmarshalStrict(data, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(file.Nodes) == 0 {
		return nil, fmt.Errorf("%s: no nodes", path)
	}
	seen := map[string]bool{}
	for i := range file.Nodes {
		n := &file.Nodes[i]
		if n.Name == "" || seen[n.Name] {
			return nil, fmt.Errorf("%s: node %d: missing or repeated name %q", path, i, n.Name)
		}
		seen[n.Name] = true
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
			if _, ok := n.Capacity[r]; !ok {
				return nil, fmt.Errorf("%s: node %s: capacity needs %s", path, n.Name, r)
			}
		}
		if n.Allocatable == nil {
			n.Allocatable = n.Capacity.DeepCopy()
			mem := n.Allocatable[corev1.ResourceMemory]
			mem.Sub(resource.MustParse("100Mi")) // the kubelet's default eviction threshold
			n.Allocatable[corev1.ResourceMemory] = mem
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		setDefault(n.Labels, "kubernetes.io/hostname", n.Name)
		setDefault(n.Labels, "kubernetes.io/os", "linux")
		if s, ok := n.Annotations[speedAnnotation]; ok {
			n.speed, err = strconv.ParseFloat(s, 64)
			if err != nil || n.speed <= 0 {
				return nil, fmt.Errorf("%s: node %s: %s must be a positive number of cores, got %q",
					path, n.Name, speedAnnotation, s)
			}
		}
	}
	return file.Nodes, nil
}

func setDefault(m map[string]string, key, value string) {
	if _, ok := m[key]; !ok {
		m[key] = value
	}
}

// nodeStatus is the status a healthy kubelet reports for spec at time now.
func nodeStatus(spec *nodeSpec, kubeVersion string, kubeletPort int32, now metav1.Time) corev1.NodeStatus {
	condition := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg,
			LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return corev1.NodeStatus{
		Capacity:    spec.Capacity,
		Allocatable: spec.Allocatable,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory",
				"kubelet has sufficient memory available"),
			condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure",
				"kubelet has no disk pressure"),
			condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID",
				"kubelet has sufficient PID available"),
			condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady",
				"ballast-node-agent is posting ready status"),
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: kubeletPort}},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
			{Type: corev1.NodeHostName, Address: spec.Name},
		},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID:               spec.Name,
			KernelVersion:           "emulated",
			OSImage:                 "Raspberry Pi OS (emulated by ballast-node-agent)",
			ContainerRuntimeVersion: "ballast-node-agent://" + kubeVersion,
			KubeletVersion:          kubeVersion,
			KubeProxyVersion:        kubeVersion,
			OperatingSystem:         spec.Labels["kubernetes.io/os"],
			Architecture:            spec.Labels["kubernetes.io/arch"],
		},
	}
}

// registerNode creates the Node (or takes over an existing one) and reports it
// Ready. Returns the Node as stored.
func registerNode(ctx context.Context, cs kubernetes.Interface, spec *nodeSpec, kubeVersion string,
	kubeletPort int32) (*corev1.Node, error) {
	status := nodeStatus(spec, kubeVersion, kubeletPort, metav1.Now())
	node, err := cs.CoreV1().Nodes().Get(ctx, spec.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node, err = cs.CoreV1().Nodes().Create(ctx, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Labels: spec.Labels, Annotations: spec.Annotations},
			Status:     status,
		}, metav1.CreateOptions{})
	} else if err == nil {
		node.Labels, node.Annotations = spec.Labels, spec.Annotations
		node.Spec.Unschedulable = false
		node, err = cs.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("registering node %s: %w", spec.Name, err)
	}
	// The node lifecycle controller may change the new Node (its not-ready
	// taint) between the write above and this one: read it again and retry.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node.Status = status
		written, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if latest, getErr := cs.CoreV1().Nodes().Get(ctx, spec.Name, metav1.GetOptions{}); getErr == nil {
				node = latest
			}
			return err
		}
		if err == nil {
			node = written
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reporting status of node %s: %w", spec.Name, err)
	}
	return node, nil
}

// heartbeat renews the node's Lease every interval and refreshes its Ready
// condition every statusEvery, until ctx ends.
func heartbeat(ctx context.Context, cs kubernetes.Interface, node *corev1.Node, leaseSeconds int32,
	interval, statusEvery time.Duration) {
	lastStatus := time.Now()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var lease *coordinationv1.Lease // the last one written: one request per renewal
	for {
		var err error
		if lease, err = renewLease(ctx, cs, node, leaseSeconds, lease); err != nil && ctx.Err() == nil {
			slog.Info("lease renewal failed", "node", node.Name, "err", err)
		}
		if time.Since(lastStatus) >= statusEvery {
			if err := refreshReady(ctx, cs, node.Name); err != nil && ctx.Err() == nil {
				slog.Info("node status refresh failed", "node", node.Name, "err", err)
			} else {
				lastStatus = time.Now()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// renewLease updates `last` (the Lease as last written) with a new renew
// time, as the kubelet does; when there is none or the update fails, it
// reads the Lease first (creating it when missing). Returns the Lease
// written, nil after an error.
func renewLease(ctx context.Context, cs kubernetes.Interface, node *corev1.Node, leaseSeconds int32,
	last *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	leases := cs.CoordinationV1().Leases(nodeLeaseNamespace)
	now := metav1.NewMicroTime(time.Now())
	if last != nil {
		last.Spec.RenewTime = &now
		if written, err := leases.Update(ctx, last, metav1.UpdateOptions{}); err == nil {
			return written, nil
		}
	}
	lease, err := leases.Get(ctx, node.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{
				Name: node.Name, Namespace: nodeLeaseNamespace,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
				}},
			},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(node.Name), LeaseDurationSeconds: ptr.To(leaseSeconds),
				RenewTime: &now,
			},
		}, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, err
	}
	lease.Spec.RenewTime = &now
	return leases.Update(ctx, lease, metav1.UpdateOptions{})
}

func refreshReady(ctx context.Context, cs kubernetes.Interface, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		for i := range node.Status.Conditions {
			c := &node.Status.Conditions[i]
			c.LastHeartbeatTime = now
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				c.Status, c.Reason, c.LastTransitionTime = corev1.ConditionTrue, "KubeletReady", now
				c.Message = "ballast-node-agent is posting ready status"
			}
		}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
}
