package main

// cri-cleanup: stops and removes every pod sandbox of one container runtime
// through the CRI, as the kubelet does when it deletes a pod. Stopping a
// sandbox runs the CNI DEL (releasing its IP, removing its veth and iptables
// rules) and removes its network namespace, which killing containerd would
// leave behind. scripts/testenv-down runs it for each real node after the
// node's kubelet has stopped.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// runCRICleanup parses the flags and removes every sandbox. Returns the exit
// code: 0 when none is left, 1 on errors (each printed), 2 on bad flags.
func runCRICleanup() int {
	flags := flag.NewFlagSet("cri-cleanup", flag.ContinueOnError)
	endpoint := flags.String("runtime-endpoint", "", "the runtime's CRI socket, unix:///path (required)")
	timeout := flags.Duration("timeout", 60*time.Second, "give up after this long")
	if err := flags.Parse(os.Args[1:]); err != nil || *endpoint == "" || flags.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: ballast-kube cri-cleanup --runtime-endpoint unix:///path/to/socket [--timeout D]")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	conn, err := grpc.DialContext(ctx, *endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "cri-cleanup: %s: %v\n", *endpoint, err)
		return 1
	}
	defer conn.Close()
	client := runtimeapi.NewRuntimeServiceClient(conn)
	sandboxes, err := client.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "cri-cleanup: listing sandboxes at %s: %v\n", *endpoint, err)
		return 1
	}
	code := 0
	for _, sandbox := range sandboxes.Items {
		name := sandbox.Metadata.Namespace + "/" + sandbox.Metadata.Name
		if _, err := client.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sandbox.Id}); err != nil {
			fmt.Fprintf(os.Stderr, "cri-cleanup: stopping %s: %v\n", name, err)
			code = 1
			continue
		}
		if _, err := client.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sandbox.Id}); err != nil {
			fmt.Fprintf(os.Stderr, "cri-cleanup: removing %s: %v\n", name, err)
			code = 1
		}
	}
	fmt.Fprintf(os.Stderr, "cri-cleanup: removed %d sandboxes at %s\n", len(sandboxes.Items), *endpoint)
	return code
}
