#include "operator/controller/architectures.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <sstream>

namespace ballast::controller {

using nlohmann::json;

namespace {

// The values of kubernetes.io/arch (Go's GOARCH of the platforms Kubernetes
// builds for).
const std::vector<std::string>& KnownArchitectures() {
  static const std::vector<std::string> known = {
      "amd64", "arm64", "arm", "386", "ppc64le", "s390x", "riscv64", "mips64le", "loong64"};
  return known;
}

// Names other tools give architectures, and Kubernetes' name for each.
std::string KubernetesNameOf(const std::string& arch) {
  static const std::map<std::string, std::string> aliases = {
      {"aarch64", "arm64"}, {"x86_64", "amd64"}, {"x86-64", "amd64"}, {"armv7", "arm"},
      {"armv7l", "arm"},    {"armhf", "arm"},    {"i386", "386"},     {"i686", "386"}};
  auto found = aliases.find(arch);
  return found == aliases.end() ? "" : found->second;
}

Status CheckArchitecture(const std::string& flag, const std::string& value,
                         const std::string& arch) {
  const auto& known = KnownArchitectures();
  if (std::find(known.begin(), known.end(), arch) != known.end()) return Status::Ok();
  std::string hint;
  if (const std::string name = KubernetesNameOf(arch); !name.empty()) {
    hint = fmt::format(" ({} is Kubernetes' name for it)", name);
  }
  return Status::Invalid(fmt::format(
      "{} {}: expected an architecture as the kubernetes.io/arch label names it ({}), got "
      "\"{}\"{}",
      flag, value, fmt::join(known, ", "), arch, hint));
}

// "ARCH=REST" split at the first '='.
StatusOr<std::pair<std::string, std::string>> SplitAssignment(const std::string& flag,
                                                              const std::string& value,
                                                              const std::string& example) {
  const auto equals = value.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == value.size()) {
    return Status::Invalid(
        fmt::format("{} {}: expected ARCH={}, got \"{}\"", flag, value, example, value));
  }
  std::string arch = value.substr(0, equals);
  BALLAST_RETURN_IF_ERROR(CheckArchitecture(flag, value, arch));
  return std::pair{std::move(arch), value.substr(equals + 1)};
}

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.push_back("");
  return parts;
}

// A Kubernetes quantity: 100m, 0.5, 256Mi, 1G, 1e3.
bool IsQuantity(const std::string& text) {
  static const std::regex quantity(
      R"(^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$)");
  return std::regex_match(text, quantity);
}

// A resource name: cpu, memory, ephemeral-storage, hugepages-2Mi, or a
// domain-prefixed one (example.com/gpu).
bool IsResourceName(const std::string& text) {
  static const std::regex name(
      R"(^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$)");
  return std::regex_match(text, name);
}

StatusOr<json> ParseResources(const std::string& flag, const std::string& value,
                              const std::string& spec) {
  json resources = json::object();
  for (const std::string& entry : Split(spec, ',')) {
    const auto equals = entry.find('=');
    const std::string key = entry.substr(0, equals);
    const auto dot = key.find('.');
    const std::string kind = key.substr(0, dot);
    const std::string name = dot == std::string::npos ? "" : key.substr(dot + 1);
    if (equals == std::string::npos || (kind != "requests" && kind != "limits") ||
        !IsResourceName(name)) {
      return Status::Invalid(
          fmt::format("{} {}: expected requests.NAME=QUANTITY or limits.NAME=QUANTITY, e.g. "
                      "requests.cpu=100m,limits.memory=256Mi; got \"{}\"",
                      flag, value, entry));
    }
    const std::string quantity = entry.substr(equals + 1);
    if (!IsQuantity(quantity)) {
      return Status::Invalid(
          fmt::format("{} {}: {}: expected a quantity such as 100m, 0.5, 256Mi or 1G, got \"{}\"",
                      flag, value, key, quantity));
    }
    if (resources.contains(kind) && resources[kind].contains(name)) {
      return Status::Invalid(fmt::format("{} {}: {} is given twice", flag, value, key));
    }
    resources[kind][name] = quantity;
  }
  return resources;
}

Status CheckAllowed(const ArchitectureSettings& settings, const std::string& flag,
                    const std::string& value, const std::string& arch) {
  if (settings.allowed.empty() || settings.allowed.contains(arch)) return Status::Ok();
  return Status::Invalid(fmt::format(
      "{} {}: architecture {} is not in --worker-architectures ({}), so no worker would use it",
      flag, value, arch, fmt::join(settings.allowed, ", ")));
}

}  // namespace

StatusOr<ArchitectureSettings> ParseArchitectureFlags(
    const std::string& list, const std::vector<std::string>& image_for,
    const std::vector<std::string>& resources_for) {
  ArchitectureSettings settings;
  if (!list.empty()) {
    for (const std::string& arch : Split(list, ',')) {
      BALLAST_RETURN_IF_ERROR(CheckArchitecture("--worker-architectures", list, arch));
      if (!settings.allowed.insert(arch).second) {
        return Status::Invalid(
            fmt::format("--worker-architectures {}: {} is listed twice", list, arch));
      }
    }
  }
  for (const std::string& value : image_for) {
    BALLAST_ASSIGN_OR_RETURN(auto split, SplitAssignment("--worker-image-for", value, "IMAGE"));
    const auto& [arch, image] = split;
    if (image.find_first_of(" \t\n") != std::string::npos) {
      return Status::Invalid(fmt::format(
          "--worker-image-for {}: expected an image reference without spaces, got \"{}\"", value,
          image));
    }
    BALLAST_RETURN_IF_ERROR(CheckAllowed(settings, "--worker-image-for", value, arch));
    if (!settings.images.emplace(arch, image).second) {
      return Status::Invalid(
          fmt::format("--worker-image-for {}: architecture {} is given twice", value, arch));
    }
  }
  for (const std::string& value : resources_for) {
    BALLAST_ASSIGN_OR_RETURN(auto split, SplitAssignment("--worker-resources-for", value,
                                                         "requests.cpu=100m,limits.memory=256Mi"));
    const auto& [arch, spec] = split;
    BALLAST_RETURN_IF_ERROR(CheckAllowed(settings, "--worker-resources-for", value, arch));
    BALLAST_ASSIGN_OR_RETURN(json resources, ParseResources("--worker-resources-for", value, spec));
    if (!settings.resources.emplace(arch, std::move(resources)).second) {
      return Status::Invalid(
          fmt::format("--worker-resources-for {}: architecture {} is given twice", value, arch));
    }
  }
  return settings;
}

std::string NodeArchitecture(const api::NodeView& node) {
  const auto found = node.meta.labels.find(kArchLabel);
  return found != node.meta.labels.end() ? found->second : "";
}

std::string ArchitectureExclusion(const api::NodeView& node, const ArchitectureSettings& settings) {
  if (settings.allowed.empty()) return "";
  const std::string& name = node.meta.name;
  const std::string arch = NodeArchitecture(node);
  if (arch.empty()) {
    return fmt::format("node {}: no label {}, and --worker-architectures allows only {}", name,
                       kArchLabel, fmt::join(settings.allowed, ", "));
  }
  if (settings.allowed.contains(arch)) return "";
  return fmt::format(
      "node {}: architecture {} is not in --worker-architectures ({}): no worker image for it",
      name, arch, fmt::join(settings.allowed, ", "));
}

WorkerPodSettings SettingsForArchitecture(WorkerPodSettings base,
                                          const ArchitectureSettings& settings,
                                          const std::string& arch) {
  if (auto image = settings.images.find(arch); image != settings.images.end()) {
    base.default_image = image->second;
  }
  if (auto resources = settings.resources.find(arch); resources != settings.resources.end()) {
    base.default_resources = resources->second;
  }
  return base;
}

}  // namespace ballast::controller
