// ConfigureTls on the context cpprestsdk makes for each connection, which
// holds the system's CA bundle when it reaches us.
#include "net/kube/tls.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace ballast::kube {
namespace {

// A self-signed CA certificate, PEM, made afresh.
std::string SelfSignedCaPem() {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  if (!key || !cert) return "";
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("ballast-test-ca"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return "";
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_X509(bio.get(), cert.get());
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

// Certificates (and CRLs) the context's store holds.
int Trusted(boost::asio::ssl::context& ctx) {
  return sk_X509_OBJECT_num(X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx.native_handle())));
}

// What cpprestsdk hands to the callback: a context with the system's roots.
boost::asio::ssl::context ConnectionContext() {
  boost::asio::ssl::context ctx(boost::asio::ssl::context::sslv23);
  ctx.set_default_verify_paths();
  return ctx;
}

// The operator's RSS rose by about 1 MB for each connection its client kept
// open (bench/operator-bench --churn): each context held the whole bundle.
TEST(ConfigureTls, WithTheClustersCaEachConnectionTrustsOnlyItNotTheSystemBundle) {
  ClusterConfig config;
  config.source = "test";
  config.ca_pem = SelfSignedCaPem();
  ASSERT_FALSE(config.ca_pem.empty());
  auto ctx = ConnectionContext();
  const int before = Trusted(ctx);
  ASSERT_TRUE(ConfigureTls(ctx, config).ok());
  EXPECT_EQ(Trusted(ctx), 1) << "the system's store held " << before;
  X509_OBJECT* only =
      sk_X509_OBJECT_value(X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx.native_handle())), 0);
  ASSERT_NE(X509_OBJECT_get0_X509(only), nullptr);
  char subject[256];
  X509_NAME_oneline(X509_get_subject_name(X509_OBJECT_get0_X509(only)), subject, sizeof subject);
  EXPECT_STREQ(subject, "/CN=ballast-test-ca");
}

TEST(ConfigureTls, WithoutACaTheSystemRootsStay) {
  ClusterConfig config;
  config.source = "test";
  auto ctx = ConnectionContext();
  const int before = Trusted(ctx);
  ASSERT_TRUE(ConfigureTls(ctx, config).ok());
  EXPECT_EQ(Trusted(ctx), before);
}

TEST(ConfigureTls, ACaThatDoesNotParseIsInvalidNamingTheSource) {
  ClusterConfig config;
  config.source = "kubeconfig x";
  config.ca_pem = "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n";
  auto ctx = ConnectionContext();
  const Status status = ConfigureTls(ctx, config);
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_NE(status.message().find("kubeconfig x"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace ballast::kube
