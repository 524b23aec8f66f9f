#include "bench/operator_bench/metrics.h"

#include <fmt/format.h>

#include <cmath>
#include <exception>
#include <iostream>
#include <sstream>

// cpprestsdk after the standard headers (DEVELOPERS.md).
#include <cpprest/http_client.h>

namespace ballast::operator_bench {

Metrics Scrape(const std::string& url) {
  Metrics metrics;
  std::string body;
  try {
    web::http::client::http_client client(url);
    body = client.request(web::http::methods::GET).get().extract_utf8string(true).get();
  } catch (const std::exception& e) {
    std::cerr << "operator_bench: scraping " << url << ": " << e.what() << "\n";
    return metrics;
  }
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    try {
      metrics[line.substr(0, space)] = std::stod(line.substr(space + 1));
    } catch (const std::exception&) {
    }
  }
  return metrics;
}

double Metric(const Metrics& metrics, const std::string& key) {
  const auto it = metrics.find(key);
  return it == metrics.end() ? NAN : it->second;
}

std::map<std::string, double> ApiRequests(const Metrics& metrics) {
  const std::string prefix = "ballast_operator_api_requests_total{verb=\"";
  std::map<std::string, double> out;
  for (const auto& [key, value] : metrics) {
    if (key.rfind(prefix, 0) != 0) continue;
    out[key.substr(prefix.size(), key.size() - prefix.size() - 2)] = value;
  }
  return out;
}

double Quantile(const Metrics& metrics, const char* q, const char* summary) {
  return Metric(metrics, fmt::format("{}{{quantile=\"{}\"}}", summary, q));
}

double MeanBetween(const Metrics& before, const Metrics& after, const std::string& summary) {
  const double count = Metric(after, summary + "_count") - Metric(before, summary + "_count");
  const double sum = Metric(after, summary + "_sum") - Metric(before, summary + "_sum");
  return count > 0 ? sum / count : NAN;
}

std::pair<double, std::string> RequestsPerJob(const Metrics& before, const Metrics& after,
                                              double jobs) {
  const auto from = ApiRequests(before);
  double total = 0;
  std::string by_verb;
  for (const auto& [verb, value] : ApiRequests(after)) {
    const double delta = value - (from.count(verb) ? from.at(verb) : 0);
    total += delta;
    if (delta > 0) {
      by_verb += fmt::format("{}{} {:.2f}", by_verb.empty() ? "" : ", ", verb, delta / jobs);
    }
  }
  return {total / jobs, by_verb};
}

}  // namespace ballast::operator_bench
