#include "daemon/server/raw_unary.h"

#include <google/protobuf/descriptor.h>

#include <cstdlib>

#include <spdlog/spdlog.h>

namespace codexd::server {

int method_index(const char* service_full_name, const char* method) {
  const auto* service = google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service_full_name);
  const auto* m = service ? service->FindMethodByName(method) : nullptr;
  if (!m) {
    spdlog::critical("no method {}.{} in the generated descriptors", service_full_name, method);
    std::abort();  // a programming error, found by the first start
  }
  return m->index();
}

}  // namespace codexd::server
