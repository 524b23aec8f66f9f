package main

// The one piece of the kubelet's HTTPS API the agent serves: container logs,
// so `kubectl logs [-f] [--tail N]` works. The API server reaches it through
// each node's status.daemonEndpoints.kubeletEndpoint port on 127.0.0.1.

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serveLogs serves /containerLogs/NS/POD/CONTAINER on addr with the given
// serving certificate, accepting only clients with a certificate signed by
// clientCA (the API server's kubelet client certificate).
func (a *agent) serveLogs(addr, certFile, keyFile, clientCAFile string) error {
	ca, err := os.ReadFile(clientCAFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return fmt.Errorf("%s: no certificate", clientCAFile)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/containerLogs/", a.containerLogs)
	server := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}}
	go func() {
		if err := server.ListenAndServeTLS(certFile, keyFile); err != nil {
			slog.Info("kubelet log server stopped", "err", err)
		}
	}()
	return nil
}

func (a *agent) containerLogs(w http.ResponseWriter, req *http.Request) {
	parts := strings.Split(strings.TrimPrefix(req.URL.Path, "/containerLogs/"), "/")
	if len(parts) != 3 {
		http.Error(w, "want /containerLogs/NAMESPACE/POD/CONTAINER", http.StatusBadRequest)
		return
	}
	namespace, name, container := parts[0], parts[1], parts[2]
	run := a.findRun(namespace, name)
	if run == nil {
		http.Error(w, fmt.Sprintf("pod %s/%s is not running on this agent", namespace, name), http.StatusNotFound)
		return
	}
	path := filepath.Join(run.dir, container+".log")
	data, err := os.ReadFile(path)
	if err != nil {
		http.Error(w, fmt.Sprintf("no log for container %s: %v", container, err), http.StatusNotFound)
		return
	}
	q := req.URL.Query()
	if n, err := strconv.Atoi(q.Get("tailLines")); err == nil && n >= 0 {
		data = tailLines(data, n)
	}
	if n, err := strconv.Atoi(q.Get("limitBytes")); err == nil && n >= 0 && n < len(data) {
		data = data[:n]
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Write(data)
	if q.Get("follow") != "true" {
		return
	}
	// Follow: stream what the file gains until the container ends or the
	// client goes away.
	offset := int64(len(data))
	if st, err := os.Stat(path); err == nil {
		offset = st.Size()
	}
	flusher, _ := w.(http.Flusher)
	for {
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-req.Context().Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		offset = copyFrom(w, path, offset)
		if !run.containerRunning(container) {
			copyFrom(w, path, offset)
			return
		}
	}
}

// copyFrom writes path's bytes from offset on to w; returns the new offset.
func copyFrom(w io.Writer, path string, offset int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return offset
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset
	}
	n, _ := io.Copy(w, f)
	return offset + n
}

func tailLines(data []byte, n int) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if n < len(lines) {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, nil)
}

// findRun is the newest run of pod namespace/name on this agent, or nil.
func (a *agent) findRun(namespace, name string) *podRun {
	a.mu.Lock()
	defer a.mu.Unlock()
	var found *podRun
	for _, entry := range a.pods {
		r := entry.run
		if r.pod.Namespace == namespace && r.pod.Name == name &&
			(found == nil || r.startTime.After(found.startTime.Time)) {
			found = r
		}
	}
	return found
}

// containerRunning: whether the container may still write to its log.
func (r *podRun) containerRunning(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range append(append([]*containerRun{}, r.init...), r.main...) {
		if c.spec.Name == name {
			return c.state.Terminated == nil
		}
	}
	return false
}
