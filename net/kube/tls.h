// The TLS side of a cluster's config (kubeconfig.h) on an OpenSSL context:
// whom to trust and which client certificate to show. HttpKubeClient applies
// it to each connection's context, which cpprestsdk makes with the system's
// CA bundle already loaded (its set_default_verify_paths).
//
// With config.ca_pem, only that CA is trusted, as client-go does: a store of
// it replaces the context's, and the system's bundle (Debian's 144
// certificates take 0.8 MB of heap in a store) is freed. Without it, the
// system's roots stay.
//
// Thread-safety: a function of its arguments; one context per call.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <utility>  // before boost::asio (DEVELOPERS.md)

#include "core/common/status.h"
#include "net/kube/kubeconfig.h"

namespace ballast::kube {

// Sets on `ctx` the trust and the client certificate and key of `config`.
// Returns Invalid, naming config.source, when the CA, the certificate or the
// key does not parse, or the key does not match the certificate; Unavailable
// when OpenSSL has no memory for a store.
Status ConfigureTls(boost::asio::ssl::context& ctx, const ClusterConfig& config);

}  // namespace ballast::kube
