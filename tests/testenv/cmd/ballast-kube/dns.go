package main

// cluster-dns: the real test nodes' cluster DNS, a small stand-in for CoreDNS
// (which is heavy to build on a 2-core machine). It answers A queries for
// <service>.<namespace>.svc.<domain> from the API server: a Service's
// ClusterIP, or for a headless Service the ready addresses of its
// EndpointSlices. Any other name under the domain is NXDOMAIN; names outside
// it are NXDOMAIN too (the test cluster has no upstream resolver). Queries of
// other types for a known Service get an empty NOERROR answer, so resolvers
// that ask A and AAAA together take the A answer.
//
// Served on UDP and TCP at --listen. Thread-safety: the listers are safe for
// concurrent use; each query is answered on its own goroutine.

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/clientcmd"
)

const dnsTTL = 5 // seconds: Services change during tests

type clusterDNS struct {
	domain   string // "svc.cluster.local.", lower case, with the final dot
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
}

// runClusterDNS parses the flags, syncs the informers and serves until SIGTERM
// or SIGINT. Returns the exit code: 0 after a signal, 1 on errors, 2 on bad
// flags.
func runClusterDNS() int {
	flags := flag.NewFlagSet("cluster-dns", flag.ContinueOnError)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig of an identity that may list Services and EndpointSlices (required)")
	listen := flags.String("listen", "", "address:port to serve on, UDP and TCP (required)")
	domain := flags.String("domain", "cluster.local", "the cluster domain")
	if err := flags.Parse(os.Args[1:]); err != nil || *kubeconfig == "" || *listen == "" || flags.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: ballast-kube cluster-dns --kubeconfig FILE --listen ADDR:PORT [--domain D]")
		return 2
	}
	if err := serveClusterDNS(*kubeconfig, *listen, *domain); err != nil {
		fmt.Fprintf(os.Stderr, "cluster-dns: %v\n", err)
		return 1
	}
	return 0
}

func serveClusterDNS(kubeconfig, listen, domain string) error {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	config.UserAgent = "ballast-cluster-dns"
	cs, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	factory := informers.NewSharedInformerFactory(cs, 0)
	d := &clusterDNS{
		domain:   "svc." + strings.ToLower(strings.TrimSuffix(domain, ".")) + ".",
		services: factory.Core().V1().Services().Lister(),
		slices:   factory.Discovery().V1().EndpointSlices().Lister(),
	}
	factory.Start(ctx.Done())
	for informer, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer %v did not sync", informer)
		}
	}
	udp, err := net.ListenPacket("udp", listen)
	if err != nil {
		return err
	}
	tcp, err := net.Listen("tcp", listen)
	if err != nil {
		udp.Close()
		return err
	}
	go d.serveUDP(udp)
	go d.serveTCP(tcp)
	fmt.Fprintf(os.Stderr, "cluster-dns: serving %s on %s\n", d.domain, listen)
	<-ctx.Done()
	udp.Close()
	tcp.Close()
	return nil
}

func (d *clusterDNS) serveUDP(conn net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, addr, err := conn.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		query := append([]byte(nil), buf[:n]...)
		go func() {
			if answer, err := d.answer(query); err == nil {
				conn.WriteTo(answer, addr)
			}
		}()
	}
}

func (d *clusterDNS) serveTCP(listener net.Listener) {
	for {
		conn, err := listener.Accept()
		if err != nil {
			return // closed
		}
		go func() {
			defer conn.Close()
			for {
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				var size uint16
				if binary.Read(conn, binary.BigEndian, &size) != nil {
					return
				}
				query := make([]byte, size)
				if _, err := io.ReadFull(conn, query); err != nil {
					return
				}
				answer, err := d.answer(query)
				if err != nil {
					return
				}
				framed := binary.BigEndian.AppendUint16(nil, uint16(len(answer)))
				if _, err := conn.Write(append(framed, answer...)); err != nil {
					return
				}
			}
		}()
	}
}

// answer builds the response to one query message; an error means the query
// could not be parsed (it is dropped, as a server does with garbage).
func (d *clusterDNS) answer(query []byte) ([]byte, error) {
	var parser dnsmessage.Parser
	header, err := parser.Start(query)
	if err != nil {
		return nil, err
	}
	question, err := parser.Question()
	if err != nil {
		return nil, err
	}
	response := dnsmessage.Header{ID: header.ID, Response: true, Authoritative: true,
		RecursionDesired: header.RecursionDesired, RCode: dnsmessage.RCodeSuccess}
	addresses, found := d.lookup(strings.ToLower(question.Name.String()))
	if !found {
		response.RCode = dnsmessage.RCodeNameError
	}
	builder := dnsmessage.NewBuilder(make([]byte, 0, 512), response)
	builder.EnableCompression()
	if err := builder.StartQuestions(); err != nil {
		return nil, err
	}
	if err := builder.Question(question); err != nil {
		return nil, err
	}
	if err := builder.StartAnswers(); err != nil {
		return nil, err
	}
	if question.Type == dnsmessage.TypeA && question.Class == dnsmessage.ClassINET {
		for _, a := range addresses {
			rh := dnsmessage.ResourceHeader{Name: question.Name, Class: dnsmessage.ClassINET, TTL: dnsTTL}
			if err := builder.AResource(rh, dnsmessage.AResource{A: a.As4()}); err != nil {
				return nil, err
			}
		}
	}
	return builder.Finish()
}

// lookup resolves "<service>.<namespace>.svc.<domain>." to IPv4 addresses;
// found is false when no such Service exists.
func (d *clusterDNS) lookup(name string) (addresses []netip.Addr, found bool) {
	rest, ok := strings.CutSuffix(name, "."+d.domain)
	if !ok {
		return nil, false
	}
	service, namespace, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(namespace, ".") {
		return nil, false
	}
	svc, err := d.services.Services(namespace).Get(service)
	if err != nil {
		return nil, false
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil && ip.Is4() {
			addresses = append(addresses, ip)
		}
		return addresses, true
	}
	return d.readyEndpoints(namespace, service), true
}

// readyEndpoints are the ready IPv4 addresses of a headless Service.
func (d *clusterDNS) readyEndpoints(namespace, service string) []netip.Addr {
	selector := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service})
	slices, err := d.slices.EndpointSlices(namespace).List(selector)
	if err != nil {
		return nil
	}
	var addresses []netip.Addr
	for _, slice := range slices {
		if slice.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		for _, endpoint := range slice.Endpoints {
			if endpoint.Conditions.Ready != nil && !*endpoint.Conditions.Ready {
				continue
			}
			for _, address := range endpoint.Addresses {
				if ip, err := netip.ParseAddr(address); err == nil {
					addresses = append(addresses, ip)
				}
			}
		}
	}
	return addresses
}
