#include "daemon/server/raw_unary.h"

#include <google/protobuf/descriptor.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

#include <spdlog/spdlog.h>

namespace codexd::server {

namespace {

struct RawMethods {
  std::mutex mutex;
  std::set<std::string, std::less<>> paths;  // "/package.Service/Method"
};

RawMethods& raw_methods() {
  static RawMethods methods;
  return methods;
}

}  // namespace

int raw_method_index(const char* service_full_name, const char* method) {
  const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service_full_name);
  const auto* m = service ? service->FindMethodByName(method) : nullptr;
  if (!m) {
    spdlog::critical("no method {}.{} in the generated descriptors", service_full_name, method);
    std::abort();  // a programming error, found by the first start
  }
  RawMethods& raw = raw_methods();
  std::lock_guard lock(raw.mutex);
  raw.paths.insert("/" + std::string(service_full_name) + "/" + method);
  return m->index();
}

bool is_raw_method(std::string_view grpc_path) {
  RawMethods& raw = raw_methods();
  std::lock_guard lock(raw.mutex);
  return raw.paths.find(grpc_path) != raw.paths.end();
}

}  // namespace codexd::server
