package main

// print-nodes: the node file for the shell scripts that start real kubelets
// (scripts/testenv-up --real-nodes), so the file is read and checked by the
// same code as the emulated nodes'.

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// printNodes checks the node file named by --nodes FILE and prints one line
// per node: name, emulated speed in host cores (0: no limit) and its labels as
// k=v,k=v, separated by tabs. Returns the exit code: 0, 1 for a bad file, 2 for
// bad arguments.
func printNodes(args []string) int {
	if len(args) != 2 || args[0] != "--nodes" {
		fmt.Fprintln(os.Stderr, "usage: ballast-node-agent print-nodes --nodes FILE")
		return 2
	}
	specs, err := loadNodes(args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "ballast-node-agent: %v\n", err)
		return 1
	}
	for _, n := range specs {
		labels := make([]string, 0, len(n.Labels))
		for k, v := range n.Labels {
			labels = append(labels, k+"="+v)
		}
		sort.Strings(labels)
		fmt.Printf("%s\t%s\t%s\n", n.Name, strconv.FormatFloat(n.speed, 'f', -1, 64), strings.Join(labels, ","))
	}
	return 0
}
