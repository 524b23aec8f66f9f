#include "net/kube/tls.h"

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace ballast::kube {

Status ConfigureTls(boost::asio::ssl::context& ctx, const ClusterConfig& config) {
  try {
    if (!config.ca_pem.empty()) {
      X509_STORE* store = X509_STORE_new();
      if (store == nullptr) {
        return Status::Unavailable(
            fmt::format("{}: no memory for a certificate store", config.source));
      }
      SSL_CTX_set_cert_store(ctx.native_handle(), store);  // frees the store it had
      ctx.add_certificate_authority(boost::asio::buffer(config.ca_pem));
    }
    if (!config.cert_pem.empty()) {
      ctx.use_certificate_chain(boost::asio::buffer(config.cert_pem));
      ctx.use_private_key(boost::asio::buffer(config.key_pem), boost::asio::ssl::context::pem);
      if (SSL_CTX_check_private_key(ctx.native_handle()) != 1) {
        return Status::Invalid(
            fmt::format("{}: the client key does not match the client certificate", config.source));
      }
    }
  } catch (const std::exception& e) {
    return Status::Invalid(fmt::format("{}: the CA, client certificate or key is invalid: {}",
                                       config.source, e.what()));
  }
  return Status::Ok();
}

}  // namespace ballast::kube
